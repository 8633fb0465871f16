# Bash completion for tlc, the TileLang compiler. Source it (or install it as
# share/bash-completion/completions/tlc, which `cmake --install` does) and `tlc <TAB>` completes
# options, their choices (--emit, --target, --color, ...), .tl files and the `recommend`
# subcommand. The options and choices are read from the `--help` of the tlc being completed, so
# they follow the binary rather than a list kept here.

# The --help text of the tlc on the command line, or of its `recommend` subcommand when $1 is
# "bin recommend" (cached per command for the shell's lifetime).
_tlc_help() {
  if [[ "${_tlc_help_of-}" != "$1" ]]; then
    _tlc_help_text=$($1 --help 2>/dev/null)
    _tlc_help_of=$1
  fi
  printf '%s\n' "$_tlc_help_text"
}

# Every option of the help text: -o, --output, --emit, ...
_tlc_options() {
  _tlc_help "$1" | sed -nE 's/^ +(-[A-Za-z0-9],)?(-{1,2}[A-Za-z][-A-Za-z0-9]*).*/\1 \2/p' | tr ',' ' '
}

# The choices of option $2 (`--emit TEXT:{tokens,ast,...}` in the help), space-separated.
_tlc_choices() {
  _tlc_help "$1" | sed -nE "s/^ +$2 TEXT:\\{([^}]*)\\}.*/\\1/p" | head -n 1 | tr ',' ' '
}

# The GPU descriptor names `recommend --help` lists: "a descriptor name (h100-sxm, h200, ...)".
_tlc_devices() {
  _tlc_help "$1 recommend" | sed -nE 's/.*a descriptor name \(([^)]*)\).*/\1/p' | head -n 1 | tr -d ','
}

_tlc() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} tlc=${COMP_WORDS[0]}
  local bin=$tlc choices
  [[ ${COMP_WORDS[1]-} == recommend && $COMP_CWORD -gt 1 ]] && bin="$tlc recommend"
  COMPREPLY=()
  # --opt=value
  if [[ "$cur" == --*=* ]]; then
    choices=$(_tlc_choices "$bin" "${cur%%=*}")
    if [[ -n "$choices" ]]; then
      local value=${cur#*=}
      COMPREPLY=($(compgen -P "${cur%%=*}=" -W "$choices" -- "$value"))
    fi
    return 0
  fi
  case "$prev" in
    -o|--output|--nvcc)
      compopt -o filenames 2>/dev/null
      COMPREPLY=($(compgen -f -- "$cur"))
      return 0 ;;
    -D|--namespace|--assume|--max-variants|--kernel|--top|--values)
      return 0 ;;
    --device)
      # A descriptor name or a .json file.
      compopt -o filenames 2>/dev/null
      COMPREPLY=($(compgen -W "$(_tlc_devices "$tlc")" -- "$cur") $(compgen -f -X '!*.json' -- "$cur"))
      return 0 ;;
    -*)
      choices=$(_tlc_choices "$bin" "$prev")
      if [[ -n "$choices" ]]; then
        COMPREPLY=($(compgen -W "$choices" -- "$cur"))
        return 0
      fi ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_tlc_options "$bin")" -- "$cur"))
    return 0
  fi
  # Kernels, directories to reach them, and the subcommand as the first word.
  compopt -o filenames 2>/dev/null
  COMPREPLY=($(compgen -f -X '!*.tl' -- "$cur") $(compgen -d -- "$cur"))
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY+=($(compgen -W "recommend" -- "$cur"))
  fi
  return 0
}

complete -F _tlc tlc

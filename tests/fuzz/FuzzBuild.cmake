# Included by the top-level CMakeLists.txt when TLC_FUZZ is on: sanitizer and coverage flags
# for every target, and a copy of ANTLR's headers that clang accepts.

# TLC_FUZZ_SANITIZERS: "address,undefined" finds the most; "undefined" alone runs several
# times faster (long runs, CI's bounded run). vptr checks need the RTTI of LLVM's classes,
# which Debian's LLVM is built without.
set(TLC_FUZZ_SANITIZERS "address,undefined" CACHE STRING "sanitizers of the fuzz build")
add_compile_options(-fsanitize=fuzzer-no-link,${TLC_FUZZ_SANITIZERS} -fno-sanitize=vptr
                    -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
add_link_options(-fsanitize=${TLC_FUZZ_SANITIZERS} -fno-sanitize=vptr)
# A unity build: each library's files compiled as one translation unit, the shared headers
# (LLVM's, ANTLR's, the IR's) parsed once per library: 254 s of clang's CPU time instead of
# about 440 (CI builds this from nothing in fuzz.run). tlc_ops and tlc_pictures opt out (their
# files define file-local names alike); .ci/setup's build is a unity build too, a build configured
# without CMAKE_UNITY_BUILD one file per unit.
set(CMAKE_UNITY_BUILD ON)
set(CMAKE_UNITY_BUILD_BATCH_SIZE 16)  # as .ci/setup's build: fewer units, less repeated work
# Only the shared libraries tlc-fuzz uses: Debian's LLVM exports libz3 (23 MB, its optional SMT
# solver) to every program linking LLVMSupport, and pack.sh ships what the binary loads.
add_link_options(-Wl,--as-needed)

# Debian's ANTLR 4.9 headers do not compile with clang: InterpreterData's default
# constructor default-constructs a dfa::Vocabulary, whose default constructor is deleted
# (GCC lets it pass while it is unused). tlc never uses it: delete it in a copy of the
# headers that the grammar library includes instead.
set(TLC_ANTLR_COPY ${CMAKE_BINARY_DIR}/antlr4-runtime)
file(COPY ${ANTLR4_INCLUDE_DIR}/ DESTINATION ${TLC_ANTLR_COPY})
file(READ ${TLC_ANTLR_COPY}/misc/InterpreterDataReader.h TLC_TEXT)
string(REPLACE "InterpreterData() {};" "InterpreterData() = delete;" TLC_TEXT "${TLC_TEXT}")
file(WRITE ${TLC_ANTLR_COPY}/misc/InterpreterDataReader.h "${TLC_TEXT}")
set(ANTLR4_INCLUDE_DIR ${TLC_ANTLR_COPY})

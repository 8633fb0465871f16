#include "Parser.h"

#include "ASTBuilder.h"
#include "Limits.h"
#include "SourceText.h"
#include "SyntaxErrors.h"
#include "TileLangLexer.h"
#include "TileLangParser.h"

#include "antlr4-runtime.h"

using tlc::grammar::TileLangLexer;
using tlc::grammar::TileLangParser;

namespace tlc {

namespace {

// Deeper nesting is rejected before parsing, so that the recursive-descent parser and the
// AST walkers stay far from the stack limit; larger input before lexing.
using limits::kMaxInputBytes;
using limits::kMaxNesting;

bool checkInputSize(unsigned bufferId, DiagnosticEngine &diags) {
  const llvm::MemoryBuffer *buffer = diags.sourceManager().getMemoryBuffer(bufferId);
  if (buffer->getBufferSize() <= kMaxInputBytes)
    return true;
  llvm::SMLoc start = llvm::SMLoc::getFromPointer(buffer->getBufferStart());
  diags.error(llvm::SMRange(start, start),
              "the file is " + std::to_string(buffer->getBufferSize()) +
                  " bytes, more than the limit of " + std::to_string(kMaxInputBytes) +
                  " bytes for one TileLang source")
      .hint("split it into several files, one or a few kernels each");
  return false;
}

// Tracks nesting as the parser will see it: open brackets plus the else-if branches of
// every chain still open.
class NestingDepth {
public:
  // Feeds the next visible token; false once the depth passes kMaxNesting.
  bool feed(const std::string &text) {
    // A chain at this depth ends at the first token after a `}` that is not `else`.
    if (afterCloseBrace && text != "else")
      endChain();
    afterCloseBrace = false;
    if (text == "(" || text == "[" || text == "{") {
      chains.push_back(0);
    } else if ((text == ")" || text == "]" || text == "}") && chains.size() > 1) {
      endChain();
      chains.pop_back();
      afterCloseBrace = text == "}";
    } else if (text == "if" && previous == "else") {
      ++chains.back();
      ++chained;
    }
    previous = text;
    return chains.size() - 1 + chained <= kMaxNesting;
  }

private:
  void endChain() {
    chained -= chains.back();
    chains.back() = 0;
  }

  std::vector<unsigned> chains = {0}; // else-if branches of the open chain, per bracket depth
  unsigned chained = 0;               // their sum
  bool afterCloseBrace = false;
  std::string previous;
};

// The lexer never fails (a catch-all token takes stray characters); lexical errors are
// reported here, and the offending tokens are moved off the parser's channel so the parser
// does not report them a second time.
class Lexed {
public:
  Lexed(const SourceText &source)
      : input(source.utf8()), lexer(&input), tokens(&lexer) {
    lexer.removeErrorListeners();
    tokens.fill();
  }

  // Reports lexical errors; false if there were any. `fatal` is set when the input must not
  // reach the parser at all (nesting too deep).
  bool reportLexicalErrors(const SourceText &source, DiagnosticEngine &diags, bool &fatal) {
    bool ok = true;
    fatal = false;
    NestingDepth depth;
    for (antlr4::Token *tok : tokens.getTokens()) {
      auto *writable = dynamic_cast<antlr4::WritableToken *>(tok);
      switch (tok->getType()) {
      case TileLangLexer::INVALID_CHAR: {
        std::string text = tok->getText();
        diags.error(source.rangeOf(tok), "invalid character '" + text + "'")
            .hint(text == "#" ? "comments start with // or /*"
                  : text == "'" ? "strings use double quotes"
                                : "this character has no meaning in TileLang");
        ok = false;
        if (writable)
          writable->setChannel(antlr4::Token::HIDDEN_CHANNEL);
        break;
      }
      case TileLangLexer::UNTERMINATED_STRING:
        diags.error(source.rangeOf(tok), "unterminated string literal")
            .hint("add the closing '\"' on the same line");
        ok = false;
        if (writable)
          writable->setChannel(antlr4::Token::HIDDEN_CHANNEL);
        break;
      case TileLangLexer::BLOCK_COMMENT:
        if (!llvm::StringRef(tok->getText()).endswith("*/") || tok->getText().size() < 4) {
          llvm::SMRange r = source.rangeOf(tok);
          diags.error(llvm::SMRange(r.Start, llvm::SMLoc::getFromPointer(r.Start.getPointer() + 2)),
                      "unterminated /* comment")
              .hint("close it with */");
          ok = false;
        }
        break;
      default:
        if (tok->getChannel() == antlr4::Token::DEFAULT_CHANNEL && !depth.feed(tok->getText())) {
          diags.error(source.rangeOf(tok), "brackets and else-if chains are nested too deeply "
                                           "(more than " + std::to_string(kMaxNesting) +
                                               " levels; each `else if` counts as one)")
              .hint("split the kernel's logic, or use select(...) or a lookup table in place "
                    "of a long else-if chain");
          fatal = true;
          return false;
        }
      }
    }
    return ok;
  }

  antlr4::ANTLRInputStream input;
  TileLangLexer lexer;
  antlr4::CommonTokenStream tokens;
};

} // namespace

bool parseProgram(unsigned bufferId, ASTContext &ctx, DiagnosticEngine &diags) {
  SourceText source(diags.sourceManager(), bufferId);
  ctx.program.fileName =
      diags.sourceManager().getMemoryBuffer(bufferId)->getBufferIdentifier().str();
  if (!checkInputSize(bufferId, diags) || !source.validateUtf8(diags))
    return false;
  Lexed lexed(source);
  bool fatal = false;
  bool lexOk = lexed.reportLexicalErrors(source, diags, fatal);
  if (fatal || diags.overErrorCap())
    return false;

  TileLangParser parser(&lexed.tokens);
  parser.removeErrorListeners();
  parser.setErrorHandler(std::make_shared<SyntaxErrorStrategy>(diags, source));
  unsigned errorsBefore = diags.errorCount();
  TileLangParser::ProgramContext *tree = nullptr;
  try {
    tree = parser.program();
  } catch (const antlr4::ParseCancellationException &) {
    return false; // past the error cap
  }
  if (!lexOk || diags.errorCount() != errorsBefore || parser.getNumberOfSyntaxErrors() != 0)
    return false;

  ASTBuilder builder(ctx, diags, source);
  builder.build(tree);
  return diags.errorCount() == errorsBefore;
}

bool dumpTokens(unsigned bufferId, DiagnosticEngine &diags, llvm::raw_ostream &os) {
  SourceText source(diags.sourceManager(), bufferId);
  if (!checkInputSize(bufferId, diags) || !source.validateUtf8(diags))
    return false;
  Lexed lexed(source);
  bool fatal = false;
  bool ok = lexed.reportLexicalErrors(source, diags, fatal);
  const antlr4::dfa::Vocabulary &vocab = lexed.lexer.getVocabulary();
  for (antlr4::Token *tok : lexed.tokens.getTokens()) {
    auto lineCol = diags.sourceManager().getLineAndColumn(source.rangeOf(tok).Start, bufferId);
    std::string kind = tok->getType() == antlr4::Token::EOF ? "EOF" : vocab.getSymbolicName(tok->getType());
    if (kind.empty())
      kind = "PUNCT";
    // Keywords print as KEYWORD so the dump reads well; the symbolic names of literal
    // tokens are ANTLR's T__N placeholders.
    std::string lit = vocab.getLiteralName(tok->getType());
    if (!lit.empty())
      kind = std::isalpha(static_cast<unsigned char>(lit[1])) ? "KEYWORD" : "PUNCT";
    os << lineCol.first << ":" << lineCol.second << " " << kind;
    if (tok->getType() != antlr4::Token::EOF) {
      os << " '";
      os.write_escaped(tok->getText());
      os << "'";
    }
    if (tok->getChannel() != antlr4::Token::DEFAULT_CHANNEL)
      os << " (hidden)";
    os << "\n";
  }
  return ok;
}

} // namespace tlc

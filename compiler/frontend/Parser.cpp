#include "Parser.h"

#include "ASTBuilder.h"
#include "SourceText.h"
#include "SyntaxErrors.h"
#include "TileLangLexer.h"
#include "TileLangParser.h"

#include "antlr4-runtime.h"

using tlc::grammar::TileLangLexer;
using tlc::grammar::TileLangParser;

namespace tlc {

namespace {

// Deeper bracket nesting than any real kernel is rejected before parsing, so that the
// recursive-descent parser and the AST walkers stay far from the stack limit.
constexpr unsigned kMaxNesting = 256;

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

  bool reportLexicalErrors(const SourceText &source, DiagnosticEngine &diags) {
    bool ok = true;
    unsigned depth = 0;
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
      default: {
        std::string text = tok->getText();
        if (text == "(" || text == "[" || text == "{") {
          if (++depth == kMaxNesting + 1) {
            diags.error(source.rangeOf(tok), "brackets are nested too deeply (more than " +
                                                 std::to_string(kMaxNesting) + " levels)");
            return false;
          }
        } else if ((text == ")" || text == "]" || text == "}") && depth > 0) {
          --depth;
        }
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
  if (!source.validateUtf8(diags))
    return false;
  Lexed lexed(source);
  bool lexOk = lexed.reportLexicalErrors(source, diags);
  if (diags.hasErrors() && !lexOk &&
      diags.errorCount() >= DiagnosticEngine::kMaxErrors)
    return false;

  TileLangParser parser(&lexed.tokens);
  parser.removeErrorListeners();
  parser.setErrorHandler(std::make_shared<SyntaxErrorStrategy>(diags, source));
  unsigned errorsBefore = diags.errorCount();
  TileLangParser::ProgramContext *tree = parser.program();
  if (!lexOk || diags.errorCount() != errorsBefore || parser.getNumberOfSyntaxErrors() != 0)
    return false;

  ASTBuilder builder(ctx, diags, source);
  builder.build(tree);
  return diags.errorCount() == errorsBefore;
}

bool dumpTokens(unsigned bufferId, DiagnosticEngine &diags, llvm::raw_ostream &os) {
  SourceText source(diags.sourceManager(), bufferId);
  if (!source.validateUtf8(diags))
    return false;
  Lexed lexed(source);
  bool ok = lexed.reportLexicalErrors(source, diags);
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

#include "SyntaxErrors.h"

#include "TileLangParser.h"
#include "Types.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <set>

using tlc::grammar::TileLangParser;

namespace tlc {

namespace {

// Token types that can start an expression, collapsed to "an expression" in messages.
bool startsExpression(size_t type, const antlr4::dfa::Vocabulary &vocab) {
  switch (type) {
  case TileLangParser::INT_LIT:
  case TileLangParser::FLOAT_LIT:
  case TileLangParser::STRING_LIT:
  case TileLangParser::IDENT:
    return true;
  default:
    break;
  }
  std::string lit = vocab.getLiteralName(type);
  if (lit == "'('" || lit == "'-'" || lit == "'!'" || lit == "'~'" || lit == "'true'" ||
      lit == "'false'")
    return true;
  return false;
}

// Keyword tokens: quoted literals made of letters, digits and underscores.
bool isWordToken(size_t type, const antlr4::dfa::Vocabulary &vocab) {
  std::string lit = vocab.getLiteralName(type);
  if (lit.size() < 3)
    return false;
  return llvm::all_of(llvm::StringRef(lit).drop_front().drop_back(),
                      [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string joinAlternatives(const std::vector<std::string> &items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

// A phrase for the rule being parsed, for "in a ..." context.
std::string rulePhrase(antlr4::Parser *parser) {
  antlr4::ParserRuleContext *ctx = parser->getContext();
  while (ctx) {
    // A block that has not even matched its '{' belongs to the loop, if or kernel around it.
    if (ctx->getRuleIndex() == TileLangParser::RuleBlock && ctx->children.empty()) {
      ctx = dynamic_cast<antlr4::ParserRuleContext *>(ctx->parent);
      continue;
    }
    switch (ctx->getRuleIndex()) {
    case TileLangParser::RuleCompileParams:
    case TileLangParser::RuleCompileParam:
      return "the compile-time parameter list";
    case TileLangParser::RuleTensorParamList:
    case TileLangParser::RuleTensorParam:
      return "the parameter list";
    case TileLangParser::RuleLaunchSpec:
      return "the launch specification `grid(...) threads(...) as (...)`";
    case TileLangParser::RuleForStmt:
      return "a for loop";
    case TileLangParser::RuleIfStmt:
      return "an if statement";
    case TileLangParser::RuleAllocStmt:
      return "a buffer allocation";
    case TileLangParser::RuleLetStmt:
      return "a let binding";
    case TileLangParser::RuleArgList:
    case TileLangParser::RuleCallExpr:
      return "a call";
    case TileLangParser::RuleIndexList:
      return "an index list";
    case TileLangParser::RuleConstDecl:
      return "a const declaration";
    case TileLangParser::RuleKernelDecl:
      return "a kernel declaration";
    case TileLangParser::RuleBlock:
    case TileLangParser::RuleStmt:
      return "a statement";
    case TileLangParser::RuleProgram:
    case TileLangParser::RuleTopDecl:
      return "";
    default:
      break;
    }
    ctx = dynamic_cast<antlr4::ParserRuleContext *>(ctx->parent);
  }
  return "";
}

// The last default-channel token before `tok` (comments are on the hidden channel).
antlr4::Token *previousVisible(antlr4::Parser *parser, antlr4::Token *tok) {
  auto *stream = parser->getTokenStream();
  if (!tok || tok->getTokenIndex() == INVALID_INDEX)
    return nullptr;
  for (size_t i = tok->getTokenIndex(); i-- > 0;) {
    antlr4::Token *t = stream->get(i);
    if (t->getChannel() == antlr4::Token::DEFAULT_CHANNEL)
      return t;
  }
  return nullptr;
}

// The token right after `tok` in the stream, on any channel.
antlr4::Token *nextToken(antlr4::Parser *parser, const antlr4::Token *tok) {
  auto *stream = parser->getTokenStream();
  if (!tok || tok->getTokenIndex() == INVALID_INDEX || tok->getTokenIndex() + 1 >= stream->size())
    return nullptr;
  return stream->get(tok->getTokenIndex() + 1);
}

bool isUnterminatedComment(const antlr4::Token *tok) {
  std::string text = tok->getText();
  return tok->getType() == TileLangParser::BLOCK_COMMENT &&
         (text.size() < 4 || !llvm::StringRef(text).endswith("*/"));
}

bool isLexicalError(const antlr4::Token *tok) {
  return tok->getType() == TileLangParser::INVALID_CHAR ||
         tok->getType() == TileLangParser::UNTERMINATED_STRING || isUnterminatedComment(tok);
}

// The lexer has already reported a token just before `tok` on the same line, or right before
// it (an invalid character, an unterminated string or comment, all hidden from the parser);
// whatever the parser then trips over is fallout of that error. A `#` comment, for one,
// leaves a line of words the parser cannot make sense of.
bool followsLexicalError(antlr4::Parser *parser, const antlr4::Token *tok) {
  if (!tok || tok->getTokenIndex() == INVALID_INDEX || tok->getTokenIndex() == 0)
    return false;
  auto *stream = parser->getTokenStream();
  if (isLexicalError(stream->get(tok->getTokenIndex() - 1)))
    return true;
  for (size_t i = tok->getTokenIndex(); i-- > 0;) {
    const antlr4::Token *before = stream->get(i);
    if (before->getLine() != tok->getLine())
      return false;
    if (isLexicalError(before))
      return true;
  }
  return false;
}

const char *closerOf(const std::string &opener) {
  return opener == "(" ? ")" : opener == "[" ? "]" : "}";
}

bool isCloser(const std::string &text) { return text == ")" || text == "]" || text == "}"; }

// Keywords that may legitimately precede '=': types (`dt: dtype = f16`) and the keywords
// that are also names (`threads = 128`). Any other keyword before an assignment is a
// reserved word used as a name.
bool mayPrecedeAssignment(const std::string &text) {
  return text == "int" || text == "float" || text == "dtype" || text == "threads" ||
         text == "grid" || parseDType(text).has_value();
}

} // namespace

BracketBalance BracketBalance::of(antlr4::TokenStream *tokens) {
  BracketBalance b;
  for (size_t i = 0; i < tokens->size(); ++i) {
    antlr4::Token *tok = tokens->get(i);
    if (tok->getChannel() != antlr4::Token::DEFAULT_CHANNEL)
      continue;
    std::string text = tok->getText();
    if (text == "(" || text == "[" || text == "{") {
      b.unclosed.push_back(tok);
    } else if (isCloser(text)) {
      if (!b.unclosed.empty() && closerOf(b.unclosed.back()->getText()) == text)
        b.unclosed.pop_back();
      else
        b.unmatchedClosers.insert(i);
    }
  }
  return b;
}

std::string describeToken(const antlr4::Token *tok) {
  if (!tok || tok->getType() == antlr4::Token::EOF)
    return "end of file";
  std::string text = tok->getText();
  if (text.size() > 24)
    text = text.substr(0, 21) + "...";
  std::string out = "'";
  for (char c : text)
    out += (c == '\n' ? ' ' : c);
  return out + "'";
}

std::string describeExpected(const antlr4::misc::IntervalSet &expected,
                             const antlr4::dfa::Vocabulary &vocab) {
  bool expression = expected.contains(static_cast<size_t>(TileLangParser::INT_LIT)) &&
                    expected.contains(static_cast<size_t>(TileLangParser::IDENT));
  bool name = expected.contains(static_cast<size_t>(TileLangParser::IDENT));
  bool statement = false;
  bool dtype = false;
  bool declaration = false;
  std::vector<std::string> items;
  for (size_t type : expected.toList()) {
    std::string lit = vocab.getLiteralName(type);
    if (lit == "'for'" || lit == "'let'" || lit == "'if'")
      statement = true;
    if (lit == "'f16'")
      dtype = true;
    if (lit == "'kernel'")
      declaration = true;
  }
  std::set<std::string> seen;
  auto add = [&](const std::string &s) {
    if (seen.insert(s).second)
      items.push_back(s);
  };
  for (size_t type : expected.toList()) {
    if (type == antlr4::Token::EOF) {
      // At the top level "end of file" is always possible and says nothing useful.
      if (!declaration)
        add("end of file");
      continue;
    }
    std::string lit = vocab.getLiteralName(type);
    if (statement && (startsExpression(type, vocab) || isWordToken(type, vocab) || lit == "';'" ||
                      lit == "'{'")) {
      add("a statement");
      continue;
    }
    if (expression && (startsExpression(type, vocab) || isWordToken(type, vocab))) {
      add("an expression");
      continue;
    }
    if (dtype && isWordToken(type, vocab) && lit != "'out'" && lit != "'int'" &&
        lit != "'float'" && lit != "'dtype'" && lit != "'shared'" && lit != "'fragment'" &&
        lit != "'local'") {
      add("a dtype (f16, bf16, f32, ...)");
      continue;
    }
    // Where a name may stand, keywords that are also allowed there (`threads` and `grid` in
    // the `name` rule, builtin and tile operator names as kernel and keyword-argument names)
    // are variants of "a name", not separate choices worth listing.
    if (name && isWordToken(type, vocab))
      continue;
    switch (type) {
    case TileLangParser::IDENT:
      add("a name");
      continue;
    case TileLangParser::INT_LIT:
      add("an integer");
      continue;
    case TileLangParser::FLOAT_LIT:
      add("a number");
      continue;
    case TileLangParser::STRING_LIT:
      add("a string");
      continue;
    default:
      break;
    }
    add(lit.empty() ? vocab.getDisplayName(type) : lit);
  }
  if (items.size() > 6) {
    items.resize(5);
    items.push_back("...");
  }
  return joinAlternatives(items);
}

void SyntaxErrorStrategy::stopPastErrorCap() const {
  if (diags.overErrorCap())
    throw antlr4::ParseCancellationException("too many errors");
}

void SyntaxErrorStrategy::sync(antlr4::Parser *parser) {
  stopPastErrorCap();
  DefaultErrorStrategy::sync(parser);
}

void SyntaxErrorStrategy::recover(antlr4::Parser *parser, std::exception_ptr e) {
  stopPastErrorCap();
  DefaultErrorStrategy::recover(parser, e);
}

antlr4::Token *SyntaxErrorStrategy::recoverInline(antlr4::Parser *parser) {
  stopPastErrorCap();
  return DefaultErrorStrategy::recoverInline(parser);
}

const BracketBalance &SyntaxErrorStrategy::brackets(antlr4::Parser *parser) {
  if (!balance)
    balance = BracketBalance::of(parser->getTokenStream());
  return *balance;
}

bool SyntaxErrorStrategy::sameStatementAsLastError(antlr4::Parser *parser,
                                                   const antlr4::Token *tok) const {
  if (lastResyncError == INVALID_INDEX || !tok || tok->getTokenIndex() == INVALID_INDEX)
    return false;
  auto *stream = parser->getTokenStream();
  for (size_t i = lastResyncError; i < tok->getTokenIndex(); ++i) {
    std::string text = stream->get(i)->getText();
    if (text == ";" || text == "{" || text == "}")
      return false;
  }
  return true;
}

bool SyntaxErrorStrategy::reportReservedName(antlr4::Parser *parser, antlr4::Token *offending) {
  static const std::set<std::string> assignOps = {"=", "+=", "-=", "*=", "/="};
  if (!assignOps.count(offending->getText()))
    return false;
  antlr4::Token *previous = previousVisible(parser, offending);
  if (!previous || !isWordToken(previous->getType(), parser->getVocabulary()) ||
      mayPrecedeAssignment(previous->getText()))
    return false;
  diags.error(source.rangeOf(previous), "'" + previous->getText() +
                                            "' is a reserved word of TileLang and cannot be "
                                            "used as a name")
      .hint("choose another name, e.g. '" + previous->getText() + "_'");
  return true;
}

void SyntaxErrorStrategy::reportEndOfFile(antlr4::Parser *parser, antlr4::Token *eof,
                                          const antlr4::misc::IntervalSet &expected) {
  const BracketBalance &b = brackets(parser);
  antlr4::Token *last = previousVisible(parser, eof);
  llvm::SMRange at = last ? source.after(last) : source.rangeOf(eof);
  // Recovery may insert several missing closers in a row; each names its own opener.
  if (unclosedReported < b.unclosed.size()) {
    antlr4::Token *open = b.unclosed[b.unclosed.size() - 1 - unclosedReported++];
    diags.error(at, std::string("expected '") + closerOf(open->getText()) + "' at end of file")
        .note(source.rangeOf(open), "to match this '" + open->getText() + "'");
    return;
  }
  // Brackets pair up: the parser reached the end while recovering from an earlier error.
  if (diags.hasErrors())
    return;
  std::string message = "unexpected end of file";
  std::string phrase = rulePhrase(parser);
  if (!phrase.empty())
    message += " in " + phrase;
  std::string expectedText = describeExpected(expected, parser->getVocabulary());
  if (!expectedText.empty())
    message += "; expected " + expectedText;
  diags.error(at, message);
}

void SyntaxErrorStrategy::reportUnexpected(antlr4::Parser *parser, antlr4::Token *offending,
                                           const antlr4::misc::IntervalSet &expected,
                                           bool unwanted) {
  if (followsLexicalError(parser, offending) || sameStatementAsLastError(parser, offending))
    return;
  // Single-token deletion resynchronises exactly; the other recoveries skip ahead.
  if (!unwanted)
    lastResyncError = offending->getTokenIndex();
  if (offending->getType() == antlr4::Token::EOF)
    return reportEndOfFile(parser, offending, expected);
  const antlr4::dfa::Vocabulary &vocab = parser->getVocabulary();
  antlr4::Token *previous = previousVisible(parser, offending);

  // The common "forgot the semicolon" case reads better at the end of the previous token.
  bool onlySemicolon = expected.size() == 1 && vocab.getLiteralName(expected.getMinElement()) == "';'";
  if (onlySemicolon && previous && previous->getLine() != offending->getLine()) {
    diags.error(source.after(previous), "expected ';' after " + describeToken(previous));
    return;
  }
  if (isCloser(offending->getText()) &&
      brackets(parser).unmatchedClosers.count(offending->getTokenIndex())) {
    diags.error(source.rangeOf(offending), "unmatched " + describeToken(offending))
        .hint(std::string("remove it, or add the opening '") +
              (offending->getText() == ")" ? "(" : offending->getText() == "]" ? "[" : "{") +
              "' it belongs to");
    return;
  }
  if (reportReservedName(parser, offending))
    return;

  std::string message = "unexpected " + describeToken(offending);
  std::string phrase = rulePhrase(parser);
  if (!phrase.empty())
    message += " in " + phrase;
  std::string expectedText = describeExpected(expected, vocab);
  if (!expectedText.empty())
    message += "; expected " + expectedText;
  auto diag = diags.error(source.rangeOf(offending), message);
  bool nameExpected = expected.contains(static_cast<size_t>(TileLangParser::IDENT));
  antlr4::Token *next = nextToken(parser, offending);
  bool digitLed = (offending->getType() == TileLangParser::INT_LIT ||
                   offending->getType() == TileLangParser::FLOAT_LIT) &&
                  next && next->getType() == TileLangParser::IDENT &&
                  next->getStartIndex() == offending->getStopIndex() + 1;
  if (nameExpected && isWordToken(offending->getType(), vocab))
    diag.hint("'" + offending->getText() + "' is a reserved word of TileLang; choose another name");
  else if (nameExpected && digitLed)
    diag.hint("names start with a letter or '_'");
  else if (unwanted)
    diag.hint("remove " + describeToken(offending));
}

void SyntaxErrorStrategy::reportNoViableAlternative(antlr4::Parser *parser,
                                                    const antlr4::NoViableAltException &e) {
  reportUnexpected(parser, e.getOffendingToken(), e.getExpectedTokens(), /*unwanted=*/false);
}

void SyntaxErrorStrategy::reportInputMismatch(antlr4::Parser *parser,
                                              const antlr4::InputMismatchException &e) {
  reportUnexpected(parser, e.getOffendingToken(), e.getExpectedTokens(), /*unwanted=*/false);
}

void SyntaxErrorStrategy::reportFailedPredicate(antlr4::Parser *parser,
                                                const antlr4::FailedPredicateException &e) {
  if (followsLexicalError(parser, e.getOffendingToken()))
    return;
  diags.error(source.rangeOf(e.getOffendingToken()),
              "unexpected " + describeToken(e.getOffendingToken()));
}

void SyntaxErrorStrategy::reportUnwantedToken(antlr4::Parser *parser) {
  if (inErrorRecoveryMode(parser))
    return;
  beginErrorCondition(parser);
  reportUnexpected(parser, parser->getCurrentToken(), getExpectedTokens(parser),
                   /*unwanted=*/true);
}

void SyntaxErrorStrategy::reportMissingToken(antlr4::Parser *parser) {
  if (inErrorRecoveryMode(parser))
    return;
  beginErrorCondition(parser);
  antlr4::Token *tok = parser->getCurrentToken();
  antlr4::misc::IntervalSet expected = getExpectedTokens(parser);
  if (followsLexicalError(parser, tok) || sameStatementAsLastError(parser, tok))
    return;
  if (tok->getType() == antlr4::Token::EOF)
    return reportEndOfFile(parser, tok, expected);
  std::string expectedText = describeExpected(expected, parser->getVocabulary());
  antlr4::Token *previous = previousVisible(parser, tok);
  if (previous)
    diags.error(source.after(previous), "expected " + expectedText + " after " +
                                            describeToken(previous));
  else
    diags.error(source.rangeOf(tok), "expected " + expectedText + " before " + describeToken(tok));
}

} // namespace tlc

#include "SyntaxErrors.h"

#include "TileLangParser.h"

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
    switch (ctx->getRuleIndex()) {
    case TileLangParser::RuleCompileParams:
    case TileLangParser::RuleCompileParam:
      return "compile-time parameter list";
    case TileLangParser::RuleTensorParamList:
    case TileLangParser::RuleTensorParam:
      return "parameter list";
    case TileLangParser::RuleLaunchSpec:
      return "launch specification (grid(...) threads(...) as (...))";
    case TileLangParser::RuleForStmt:
      return "for loop";
    case TileLangParser::RuleIfStmt:
      return "if statement";
    case TileLangParser::RuleAllocStmt:
      return "buffer allocation";
    case TileLangParser::RuleLetStmt:
      return "let binding";
    case TileLangParser::RuleArgList:
    case TileLangParser::RuleCallExpr:
      return "call";
    case TileLangParser::RuleIndexList:
      return "index list";
    case TileLangParser::RuleConstDecl:
      return "const declaration";
    case TileLangParser::RuleKernelDecl:
      return "kernel declaration";
    case TileLangParser::RuleBlock:
    case TileLangParser::RuleStmt:
      return "statement";
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

} // namespace

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
  bool statement = false;
  bool dtype = false;
  std::vector<std::string> items;
  for (size_t type : expected.toList()) {
    std::string lit = vocab.getLiteralName(type);
    if (lit == "'for'" || lit == "'let'" || lit == "'if'")
      statement = true;
    if (lit == "'f16'")
      dtype = true;
  }
  std::set<std::string> seen;
  auto add = [&](const std::string &s) {
    if (seen.insert(s).second)
      items.push_back(s);
  };
  for (size_t type : expected.toList()) {
    if (type == antlr4::Token::EOF) {
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

void SyntaxErrorStrategy::reportUnexpected(antlr4::Parser *parser, antlr4::Token *offending,
                                           const antlr4::misc::IntervalSet &expected) {
  const antlr4::dfa::Vocabulary &vocab = parser->getVocabulary();
  std::string expectedText = describeExpected(expected, vocab);
  std::string phrase = rulePhrase(parser);
  antlr4::Token *previous = previousVisible(parser, offending);

  // The common "forgot the semicolon" case reads better at the end of the previous token.
  bool onlySemicolon = expected.size() == 1 && vocab.getLiteralName(expected.getMinElement()) == "';'";
  if (onlySemicolon && previous && previous->getLine() != offending->getLine()) {
    diags.error(source.after(previous), "expected ';' after " + describeToken(previous));
    return;
  }

  std::string message = "unexpected " + describeToken(offending);
  if (!phrase.empty())
    message += " in " + phrase;
  if (!expectedText.empty())
    message += "; expected " + expectedText;
  auto diag = diags.error(source.rangeOf(offending), message);
  if (offending->getType() != antlr4::Token::EOF && isWordToken(offending->getType(), vocab) &&
      expected.contains(static_cast<size_t>(TileLangParser::IDENT)))
    diag.hint("'" + offending->getText() +
              "' is a reserved word of TileLang; choose another name");
  else if (offending->getType() == antlr4::Token::EOF)
    diag.hint("the file ends early; is a closing '}' or ')' missing?");
}

void SyntaxErrorStrategy::reportNoViableAlternative(antlr4::Parser *parser,
                                                    const antlr4::NoViableAltException &e) {
  reportUnexpected(parser, e.getOffendingToken(), e.getExpectedTokens());
}

void SyntaxErrorStrategy::reportInputMismatch(antlr4::Parser *parser,
                                              const antlr4::InputMismatchException &e) {
  reportUnexpected(parser, e.getOffendingToken(), e.getExpectedTokens());
}

void SyntaxErrorStrategy::reportFailedPredicate(antlr4::Parser *parser,
                                                const antlr4::FailedPredicateException &e) {
  diags.error(source.rangeOf(e.getOffendingToken()),
              "unexpected " + describeToken(e.getOffendingToken()));
}

void SyntaxErrorStrategy::reportUnwantedToken(antlr4::Parser *parser) {
  if (inErrorRecoveryMode(parser))
    return;
  beginErrorCondition(parser);
  antlr4::Token *tok = parser->getCurrentToken();
  antlr4::misc::IntervalSet expected = getExpectedTokens(parser);
  std::string message = "unexpected " + describeToken(tok);
  std::string expectedText = describeExpected(expected, parser->getVocabulary());
  if (!expectedText.empty())
    message += "; expected " + expectedText;
  diags.error(source.rangeOf(tok), message).hint("remove " + describeToken(tok));
}

void SyntaxErrorStrategy::reportMissingToken(antlr4::Parser *parser) {
  if (inErrorRecoveryMode(parser))
    return;
  beginErrorCondition(parser);
  antlr4::Token *tok = parser->getCurrentToken();
  antlr4::misc::IntervalSet expected = getExpectedTokens(parser);
  std::string expectedText = describeExpected(expected, parser->getVocabulary());
  antlr4::Token *previous = previousVisible(parser, tok);
  if (previous)
    diags.error(source.after(previous), "expected " + expectedText + " after " +
                                            describeToken(previous));
  else
    diags.error(source.rangeOf(tok), "expected " + expectedText + " before " + describeToken(tok));
}

} // namespace tlc

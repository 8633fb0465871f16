// Turns ANTLR's recognition errors into TileLang diagnostics. ANTLR's own wording
// ("extraneous input ... expecting {...}", "no viable alternative") leaks grammar internals;
// we say what was found, what was expected in user terms, and where.
#pragma once

#include "Diagnostics.h"
#include "SourceText.h"

#include "antlr4-runtime.h"

namespace tlc {

class SyntaxErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
  SyntaxErrorStrategy(DiagnosticEngine &diags, const SourceText &source)
      : diags(diags), source(source) {}

protected:
  void reportNoViableAlternative(antlr4::Parser *parser,
                                 const antlr4::NoViableAltException &e) override;
  void reportInputMismatch(antlr4::Parser *parser,
                           const antlr4::InputMismatchException &e) override;
  void reportFailedPredicate(antlr4::Parser *parser,
                             const antlr4::FailedPredicateException &e) override;
  void reportUnwantedToken(antlr4::Parser *parser) override;
  void reportMissingToken(antlr4::Parser *parser) override;

private:
  void reportUnexpected(antlr4::Parser *parser, antlr4::Token *offending,
                        const antlr4::misc::IntervalSet &expected);

  DiagnosticEngine &diags;
  const SourceText &source;
};

// Words for a set of expected token types: "';'", "an expression", "')' or ','".
std::string describeExpected(const antlr4::misc::IntervalSet &expected,
                             const antlr4::dfa::Vocabulary &vocabulary);
// Words for one token: "'foo'", "end of file".
std::string describeToken(const antlr4::Token *tok);

} // namespace tlc

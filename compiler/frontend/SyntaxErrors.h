// Turns ANTLR's recognition errors into TileLang diagnostics. ANTLR's own wording
// ("extraneous input ... expecting {...}", "no viable alternative") leaks grammar internals;
// we say what was found, what was expected in user terms, and where. Errors that are only
// the fallout of an earlier one (a token right after an invalid character, the end of a file
// whose brackets all pair up) are not reported a second time.
#pragma once

#include "Diagnostics.h"
#include "SourceText.h"

#include "antlr4-runtime.h"

#include <optional>
#include <set>
#include <vector>

namespace tlc {

// How the brackets of the real token stream pair up. ANTLR's recovery conjures missing
// tokens, so only the token stream tells whether a '{' was really left open.
struct BracketBalance {
  std::vector<antlr4::Token *> unclosed; // openers still open at end of file, outermost first
  std::set<size_t> unmatchedClosers;     // token indices of closers with no opener

  static BracketBalance of(antlr4::TokenStream *tokens);
};

class SyntaxErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
  SyntaxErrorStrategy(DiagnosticEngine &diags, const SourceText &source)
      : diags(diags), source(source) {}

protected:
  // Past the error cap the parse is abandoned (ParseCancellationException): recovering from
  // thousands of errors is where pathological input spends its time.
  void sync(antlr4::Parser *parser) override;
  void recover(antlr4::Parser *parser, std::exception_ptr e) override;
  antlr4::Token *recoverInline(antlr4::Parser *parser) override;

  void reportNoViableAlternative(antlr4::Parser *parser,
                                 const antlr4::NoViableAltException &e) override;
  void reportInputMismatch(antlr4::Parser *parser,
                           const antlr4::InputMismatchException &e) override;
  void reportFailedPredicate(antlr4::Parser *parser,
                             const antlr4::FailedPredicateException &e) override;
  void reportUnwantedToken(antlr4::Parser *parser) override;
  void reportMissingToken(antlr4::Parser *parser) override;

private:
  // `unwanted`: ANTLR would delete the token to recover, so "remove it" is a fair hint.
  void reportUnexpected(antlr4::Parser *parser, antlr4::Token *offending,
                        const antlr4::misc::IntervalSet &expected, bool unwanted);
  void reportEndOfFile(antlr4::Parser *parser, antlr4::Token *eof,
                       const antlr4::misc::IntervalSet &expected);
  // `copy = ...` or `f(clear = x)`: a reserved word where a name was meant.
  bool reportReservedName(antlr4::Parser *parser, antlr4::Token *offending);
  const BracketBalance &brackets(antlr4::Parser *parser);
  // ANTLR resynchronises after a bad token by skipping to one that may follow the rule,
  // which often trips again inside the same statement; one error per statement is enough.
  bool sameStatementAsLastError(antlr4::Parser *parser, const antlr4::Token *tok) const;
  void stopPastErrorCap() const;

  DiagnosticEngine &diags;
  const SourceText &source;
  std::optional<BracketBalance> balance; // computed on the first error that needs it
  size_t unclosedReported = 0;           // openers already named at end of file
  size_t lastResyncError = INVALID_INDEX; // token of the last error ANTLR resyncs after
};

// Words for a set of expected token types: "';'", "an expression", "')' or ','".
std::string describeExpected(const antlr4::misc::IntervalSet &expected,
                             const antlr4::dfa::Vocabulary &vocabulary);
// Words for one token: "'foo'", "end of file".
std::string describeToken(const antlr4::Token *tok);

} // namespace tlc

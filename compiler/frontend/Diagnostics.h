// Diagnostics: every user-facing error goes through DiagnosticEngine so that it prints as
//   file:line:col: error: message
//   <source line>
//   <caret and underline>
// followed by notes (with their own locations) and hints. llvm::SourceMgr does the
// line/column bookkeeping and the caret rendering.
#pragma once

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace tlc {

// What becomes of warnings: printed (the default), errors (-Werror), or nothing (-w).
enum class WarningPolicy { Report, AsErrors, Ignore };

// How diagnostics are written: for people (file:line:col: error:, the line, a caret), or one
// JSON object per diagnostic and line, for editors (docs/diagnostics.schema.json).
enum class DiagnosticFormat { Text, Json };

class DiagnosticEngine {
public:
  // Past this many errors we stop printing: the rest are usually fallout of the first ones.
  static constexpr unsigned kMaxErrors = 25;

  explicit DiagnosticEngine(llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os = llvm::errs());

  // Collects notes and hints, then prints everything when it goes out of scope.
  class Builder {
  public:
    Builder(DiagnosticEngine *engine, llvm::SourceMgr::DiagKind kind, llvm::SMRange range,
            std::string message);
    Builder(Builder &&other) noexcept;
    Builder(const Builder &) = delete;
    Builder &operator=(const Builder &) = delete;
    ~Builder();

    Builder &note(llvm::SMRange range, const llvm::Twine &message);
    // A note in another file, whose source manager is `where`'s (several input files).
    Builder &note(DiagnosticEngine &where, llvm::SMRange range, const llvm::Twine &message);
    Builder &hint(const llvm::Twine &message);

  private:
    friend class DiagnosticEngine; // emitJson reads what was collected
    struct Note {
      llvm::SMRange range;
      std::string message;
      DiagnosticEngine *where = nullptr; // the engine of the note's file; null: this one's
    };
    DiagnosticEngine *engine;
    llvm::SourceMgr::DiagKind kind;
    llvm::SMRange range;
    std::string message;
    std::vector<Note> notes;
    std::vector<std::string> hints;
  };

  Builder error(llvm::SMRange range, const llvm::Twine &message);
  Builder warning(llvm::SMRange range, const llvm::Twine &message);
  // An error about the command line or a file as a whole: "tlc: error: message".
  void errorNoLocation(const llvm::Twine &message);

  unsigned errorCount() const { return numErrors; }
  // True once the error cap has been passed (and "too many errors" printed): every stage
  // stops its work then, so that input with thousands of errors costs no more than one with
  // a few.
  bool overErrorCap() const { return numErrors > kMaxErrors; }
  bool hasErrors() const { return numErrors != 0; }
  void setShowColors(bool enabled) { showColors = enabled; }
  void setWarningPolicy(WarningPolicy p) { warningPolicy = p; }
  void setFormat(DiagnosticFormat f) { format = f; }
  llvm::SourceMgr &sourceManager() { return sourceMgr; }

private:
  friend class Builder;
  void emit(llvm::SourceMgr::DiagKind kind, llvm::SMRange range, const std::string &message);
  // Where `range` is, as the JSON format gives it: file, 1-based line and column (bytes) of
  // its start and end.
  llvm::json::Object location(llvm::SMRange range);
  void emitJson(const Builder &b);

  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  unsigned numErrors = 0;
  bool showColors = false;
  bool suppressed = false;
  WarningPolicy warningPolicy = WarningPolicy::Report;
  DiagnosticFormat format = DiagnosticFormat::Text;
};

// Edit distance suggestion: the candidate closest to `name`, or "" if none is close.
std::string closestMatch(llvm::StringRef name, llvm::ArrayRef<std::string> candidates);

} // namespace tlc

#include "Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/WithColor.h"

namespace tlc {

DiagnosticEngine::DiagnosticEngine(llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os)
    : sourceMgr(sourceMgr), os(os) {}

DiagnosticEngine::Builder::Builder(DiagnosticEngine *engine, llvm::SourceMgr::DiagKind kind,
                                   llvm::SMRange range, std::string message)
    : engine(engine), kind(kind), range(range), message(std::move(message)) {}

DiagnosticEngine::Builder::Builder(Builder &&other) noexcept
    : engine(other.engine), kind(other.kind), range(other.range),
      message(std::move(other.message)), notes(std::move(other.notes)),
      hints(std::move(other.hints)) {
  other.engine = nullptr;
}

DiagnosticEngine::Builder &DiagnosticEngine::Builder::note(llvm::SMRange noteRange,
                                                           const llvm::Twine &text) {
  notes.push_back({noteRange, text.str()});
  return *this;
}

DiagnosticEngine::Builder &DiagnosticEngine::Builder::hint(const llvm::Twine &text) {
  hints.push_back(text.str());
  return *this;
}

DiagnosticEngine::Builder::~Builder() {
  if (!engine)
    return;
  if (kind == llvm::SourceMgr::DK_Error)
    ++engine->numErrors;
  if (engine->suppressed)
    return;
  if (engine->numErrors > kMaxErrors) {
    engine->suppressed = true;
    engine->os << "tlc: error: too many errors emitted (" << kMaxErrors
               << "), stopping here; fix these first\n";
    return;
  }
  engine->emit(kind, range, message);
  for (const Note &n : notes)
    engine->emit(llvm::SourceMgr::DK_Note, n.range, n.message);
  for (const std::string &h : hints) {
    if (engine->showColors)
      llvm::WithColor(engine->os, llvm::raw_ostream::CYAN, /*Bold=*/true) << "hint: ";
    else
      engine->os << "hint: ";
    engine->os << h << "\n";
  }
}

DiagnosticEngine::Builder DiagnosticEngine::error(llvm::SMRange range, const llvm::Twine &message) {
  return Builder(this, llvm::SourceMgr::DK_Error, range, message.str());
}

DiagnosticEngine::Builder DiagnosticEngine::warning(llvm::SMRange range,
                                                    const llvm::Twine &message) {
  return Builder(this, llvm::SourceMgr::DK_Warning, range, message.str());
}

void DiagnosticEngine::errorNoLocation(const llvm::Twine &message) {
  ++numErrors;
  os << "tlc: error: " << message << "\n";
}

void DiagnosticEngine::emit(llvm::SourceMgr::DiagKind kind, llvm::SMRange range,
                            const std::string &message) {
  llvm::SmallVector<llvm::SMRange, 1> ranges;
  // A one-character range draws only the caret; longer ones underline the whole token.
  if (range.isValid() && range.Start != range.End)
    ranges.push_back(range);
  sourceMgr.PrintMessage(os, range.Start, kind, message, ranges, {}, showColors);
}

std::string closestMatch(llvm::StringRef name, llvm::ArrayRef<std::string> candidates) {
  std::string best;
  unsigned bestDistance = ~0u;
  // One- and two-letter names are one edit away from most other short names.
  if (name.size() < 3)
    return best;
  // Allow roughly one edit per three characters: enough for typos, not for unrelated names.
  unsigned limit = std::max<unsigned>(1, name.size() / 3);
  for (const std::string &candidate : candidates) {
    unsigned d = name.edit_distance(candidate, /*AllowReplacements=*/true, limit + 1);
    if (d <= limit && d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best;
}

} // namespace tlc

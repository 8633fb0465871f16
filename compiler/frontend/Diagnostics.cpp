#include "Diagnostics.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Unicode.h"
#include "llvm/Support/WithColor.h"

namespace tlc {

namespace {

// A source line as the terminal shows it: tabs expanded, invalid UTF-8 replaced by U+FFFD,
// and for every byte of the original line the display column it starts at. LLVM's
// SMDiagnostic draws no caret under a line with non-ASCII text (its columns are bytes), so
// for those lines we draw it from this map.
class DisplayLine {
public:
  explicit DisplayLine(llvm::StringRef line) {
    static constexpr unsigned kTabStop = 8;
    columnOfByte.reserve(line.size() + 1);
    for (size_t i = 0; i < line.size();) {
      unsigned char c = static_cast<unsigned char>(line[i]);
      unsigned len = llvm::getNumBytesForUTF8(c);
      const auto *p = reinterpret_cast<const llvm::UTF8 *>(line.data() + i);
      bool valid = i + len <= line.size() && llvm::isLegalUTF8Sequence(p, p + len);
      if (!valid)
        len = 1;
      columnOfByte.insert(columnOfByte.end(), len, column);
      if (c == '\t') {
        do
          text += ' ';
        while (++column % kTabStop != 0);
      } else if (int width = valid ? llvm::sys::unicode::columnWidthUTF8(line.substr(i, len)) : -1;
                 width >= 0) {
        text += line.substr(i, len).str();
        column += width;
      } else {
        text += "\xEF\xBF\xBD"; // U+FFFD REPLACEMENT CHARACTER
        column += 1;
      }
      i += len;
    }
    columnOfByte.push_back(column);
  }

  const std::string &str() const { return text; }

  // `^` under byte `caretByte`, `~` under each byte range; trailing blanks trimmed.
  std::string caretLine(unsigned caretByte,
                        llvm::ArrayRef<std::pair<unsigned, unsigned>> byteRanges) const {
    std::string out(column + 1, ' ');
    for (const auto &[begin, end] : byteRanges)
      for (unsigned col = at(begin); col < at(end); ++col)
        out[col] = '~';
    out[at(caretByte)] = '^';
    return llvm::StringRef(out).rtrim().str();
  }

private:
  unsigned at(unsigned byte) const {
    return columnOfByte[std::min<size_t>(byte, columnOfByte.size() - 1)];
  }

  std::string text;
  std::vector<unsigned> columnOfByte;
  unsigned column = 0;
};

} // namespace

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

DiagnosticEngine::Builder &DiagnosticEngine::Builder::note(DiagnosticEngine &where, llvm::SMRange noteRange,
                                                           const llvm::Twine &text) {
  notes.push_back({noteRange, text.str(), &where});
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
    engine->errorNoLocation("too many errors emitted (" + llvm::Twine(kMaxErrors) + "), stopping here; fix these first");
    --engine->numErrors; // errorNoLocation counted it: it is not another error of the input
    return;
  }
  if (engine->format == DiagnosticFormat::Json) {
    engine->emitJson(*this);
    return;
  }
  engine->emit(kind, range, message);
  for (const Note &n : notes)
    (n.where ? n.where : engine)->emit(llvm::SourceMgr::DK_Note, n.range, n.message);
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
  switch (warningPolicy) {
  case WarningPolicy::Ignore:
    return Builder(nullptr, llvm::SourceMgr::DK_Warning, range, ""); // prints nothing
  case WarningPolicy::AsErrors:
    return Builder(this, llvm::SourceMgr::DK_Error, range, message.str() + " [-Werror]");
  case WarningPolicy::Report:
    break;
  }
  return Builder(this, llvm::SourceMgr::DK_Warning, range, message.str());
}

void DiagnosticEngine::errorNoLocation(const llvm::Twine &message) {
  ++numErrors;
  if (format == DiagnosticFormat::Json) {
    os << llvm::formatv("{0}", llvm::json::Value(llvm::json::Object{
                                   {"severity", "error"}, {"message", message.str()}}))
       << "\n";
    return;
  }
  os << "tlc: error: " << message << "\n";
}

llvm::json::Object DiagnosticEngine::location(llvm::SMRange range) {
  llvm::json::Object where;
  if (!range.isValid())
    return where;
  unsigned buffer = sourceMgr.FindBufferContainingLoc(range.Start);
  if (!buffer)
    return where;
  where["file"] = sourceMgr.getMemoryBuffer(buffer)->getBufferIdentifier().str();
  auto [line, column] = sourceMgr.getLineAndColumn(range.Start, buffer);
  auto [endLine, endColumn] = sourceMgr.getLineAndColumn(range.End.isValid() ? range.End : range.Start, buffer);
  where["line"] = int64_t(line);
  where["column"] = int64_t(column);
  where["end_line"] = int64_t(endLine);
  where["end_column"] = int64_t(endColumn);
  return where;
}

void DiagnosticEngine::emitJson(const Builder &b) {
  auto severity = [](llvm::SourceMgr::DiagKind k) {
    return k == llvm::SourceMgr::DK_Error ? "error" : k == llvm::SourceMgr::DK_Warning ? "warning" : "note";
  };
  llvm::json::Object diag = location(b.range);
  diag["severity"] = severity(b.kind);
  diag["message"] = b.message;
  llvm::json::Array notes;
  for (const Builder::Note &n : b.notes) {
    llvm::json::Object note = (n.where ? n.where : this)->location(n.range);
    note["message"] = n.message;
    notes.push_back(std::move(note));
  }
  if (!notes.empty())
    diag["notes"] = std::move(notes);
  if (!b.hints.empty())
    diag["hints"] = llvm::json::Array(b.hints);
  // One line per diagnostic (JSON Lines): editors read them as they come.
  os << llvm::formatv("{0}", llvm::json::Value(std::move(diag))) << "\n";
}

void DiagnosticEngine::emit(llvm::SourceMgr::DiagKind kind, llvm::SMRange range,
                            const std::string &message) {
  llvm::SmallVector<llvm::SMRange, 1> ranges;
  // A one-character range draws only the caret; longer ones underline the whole token.
  if (range.isValid() && range.Start != range.End)
    ranges.push_back(range);
  llvm::SMDiagnostic diag = sourceMgr.GetMessage(range.Start, kind, message, ranges);
  llvm::StringRef line = diag.getLineContents();
  if (diag.getColumnNo() < 0 || llvm::isASCII(line)) {
    diag.print(nullptr, os, showColors);
    return;
  }
  // Non-ASCII line: SMDiagnostic prints the header and the (cleaned) line but no caret.
  DisplayLine shown(line);
  llvm::SMDiagnostic withCleanLine(sourceMgr, diag.getLoc(), diag.getFilename(),
                                   diag.getLineNo(), diag.getColumnNo(), kind, message,
                                   shown.str(), {});
  withCleanLine.print(nullptr, os, showColors);
  std::string caret = shown.caretLine(diag.getColumnNo(), diag.getRanges());
  if (showColors)
    llvm::WithColor(os, llvm::raw_ostream::GREEN, /*Bold=*/true) << caret;
  else
    os << caret;
  os << "\n";
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
    // A difference in case only (transpose_b for transpose_B) beats any other near miss.
    if (name.equals_insensitive(candidate))
      return candidate;
    unsigned d = name.edit_distance(candidate, /*AllowReplacements=*/true, limit + 1);
    if (d <= limit && d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best;
}

} // namespace tlc

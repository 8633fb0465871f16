#include "SourceText.h"

#include "antlr4-runtime.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/Format.h"

namespace tlc {

SourceText::SourceText(llvm::SourceMgr &sm, unsigned bufferId) {
  const llvm::MemoryBuffer *buf = sm.getMemoryBuffer(bufferId);
  bufferStart = buf->getBufferStart();
  text = buf->getBuffer().str();
  bool ascii = true;
  for (unsigned char c : text)
    ascii &= c < 0x80;
  if (ascii)
    return;
  for (size_t i = 0; i < text.size();) {
    byteOffsets.push_back(i);
    unsigned len = llvm::getNumBytesForUTF8(static_cast<llvm::UTF8>(text[i]));
    i += len ? len : 1;
  }
  byteOffsets.push_back(text.size());
}

bool SourceText::validateUtf8(DiagnosticEngine &diags) const {
  const llvm::UTF8 *begin = reinterpret_cast<const llvm::UTF8 *>(text.data());
  const llvm::UTF8 *end = begin + text.size();
  const llvm::UTF8 *p = begin;
  while (p < end) {
    const llvm::UTF8 *next = p;
    unsigned len = llvm::getNumBytesForUTF8(*p);
    if (*p < 0x80) {
      ++p;
      continue;
    }
    if (len > 1 && p + len <= end && llvm::isLegalUTF8Sequence(next, p + len)) {
      p += len;
      continue;
    }
    llvm::SMLoc loc = llvm::SMLoc::getFromPointer(bufferStart + (p - begin));
    std::string byte;
    llvm::raw_string_ostream(byte) << llvm::format_hex(*p, 4);
    diags.error(llvm::SMRange(loc, loc), "invalid UTF-8 byte " + byte + " in source file")
        .hint("TileLang sources are UTF-8 text; non-ASCII characters may appear only in comments "
              "and strings");
    return false;
  }
  return true;
}

llvm::SMLoc SourceText::locAt(size_t index) const {
  size_t offset = index;
  if (!byteOffsets.empty())
    offset = index < byteOffsets.size() ? byteOffsets[index] : text.size();
  if (offset > text.size())
    offset = text.size();
  return llvm::SMLoc::getFromPointer(bufferStart + offset);
}

llvm::SMRange SourceText::rangeOf(const antlr4::Token *tok) const {
  if (!tok)
    return llvm::SMRange();
  size_t start = tok->getStartIndex();
  size_t stop = tok->getStopIndex();
  if (tok->getType() == antlr4::Token::EOF || stop < start || stop == INVALID_INDEX)
    return llvm::SMRange(locAt(start == INVALID_INDEX ? text.size() : start),
                         locAt(start == INVALID_INDEX ? text.size() : start));
  return llvm::SMRange(locAt(start), locAt(stop + 1));
}

llvm::SMRange SourceText::rangeOf(antlr4::ParserRuleContext *ctx) const {
  llvm::SMRange first = rangeOf(ctx->getStart());
  const antlr4::Token *stopTok = ctx->getStop();
  if (!stopTok || stopTok->getTokenIndex() < ctx->getStart()->getTokenIndex())
    return first;
  return llvm::SMRange(first.Start, rangeOf(stopTok).End);
}

llvm::SMRange SourceText::after(const antlr4::Token *tok) const {
  llvm::SMLoc end = rangeOf(tok).End;
  return llvm::SMRange(end, end);
}

} // namespace tlc

// `tlc --emit=layout-svg`: pictures of the layouts inference gave each fragment and shared
// buffer of a kernel (docs/pictures.md). A fragment is drawn as its tile with every element
// coloured by the warp that holds it and labelled `T<thread>:r<register>`; a shared tile with
// every element coloured by the 16-byte chunk of the 128-byte bank line it lands in and
// labelled with its bank, so the swizzle shows as a pattern. Everything is read off the
// inferred layouts (FragmentLayout::fragment(), SharedLayout::offset()), nothing recomputed.
#pragma once

#include "ir/FTG.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

namespace tlc::pictures {

// The largest corner of a tile drawn element by element; beyond it a fragment also gets an
// overview of the whole tile by warp, and the picture says which corner is shown.
constexpr int64_t kFragmentDetailRows = 32;
constexpr int64_t kFragmentDetailCols = 32;
// A shared tile's swizzle repeats every 8 rows (16-byte chunks XORed with 3 bits of the row,
// tl::GmmaLayout's modes included): 16 rows show it twice.
constexpr int64_t kSharedDetailRows = 16;
constexpr int64_t kSharedDetailCols = 64;

// One SVG document with a section per kernel of `graphs` (after inference) and, in it, one per
// fragment and shared buffer.
void writeLayoutSvg(llvm::ArrayRef<const ftg::Graph *> graphs, llvm::raw_ostream &os);

} // namespace tlc::pictures

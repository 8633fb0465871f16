// Scalar types of TileLang expressions and element types of buffers.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace tlc {

enum class DType {
  F16, BF16, F32, F64, F8E4M3, F8E5M2,
  I4, U4, I8, U8, I16, I32, U32, I64, Bool,
  F4E2M1, // OCP FP4 (1 sign, 2 exponent, 1 mantissa bits; no inf or NaN), packed like i4
};

llvm::StringRef dtypeName(DType t);
std::optional<DType> parseDType(llvm::StringRef name);
bool isFloat(DType t);
bool isInteger(DType t);
bool isSigned(DType t);
// Storage width in bits (i4/u4/f4e2m1 are packed two per byte).
unsigned bitWidth(DType t);
// i4, u4 or f4e2m1: packed two per byte along the innermost dimension (frontend/SemaPacked.cpp).
bool isPacked(DType t);

enum class WarpPolicy { FullRow, FullCol, Square };
llvm::StringRef policyName(WarpPolicy p);

// The type sema gives an expression. Literals stay "untyped" until they meet a concrete
// type, so `x * 2` keeps x's type and `0.5 * acc` keeps acc's.
class Type {
public:
  enum Kind {
    Error,        // already diagnosed; suppresses follow-on errors
    Void,         // statement-only calls
    IntLiteral,   // untyped integer constant
    FloatLiteral, // untyped floating-point constant
    Scalar,       // a concrete dtype
    DTypeValue,   // the value of a dtype parameter or a dtype keyword (`f16`)
    PolicyValue,  // full_row / full_col / square
    String,       // only for call_extern's name
    Buffer,       // a whole buffer or tensor named as a value (tile operator argument)
    Layout,       // a lambda for annotate_layout
  };

  Type() = default;
  static Type error() { return Type(Error); }
  static Type voidTy() { return Type(Void); }
  static Type intLiteral() { return Type(IntLiteral); }
  static Type floatLiteral() { return Type(FloatLiteral); }
  static Type scalar(DType t) { return Type(Scalar, t); }
  static Type dtypeValue() { return Type(DTypeValue); }
  static Type policyValue() { return Type(PolicyValue); }
  static Type string() { return Type(String); }
  static Type buffer() { return Type(Buffer); }
  static Type layout() { return Type(Layout); }
  // The type of loop variables, block indices and shape symbols.
  static Type index() { return scalar(DType::I32); }

  Kind kind() const { return k; }
  DType dtype() const { return dt; }
  bool isError() const { return k == Error; }
  bool isScalar() const { return k == Scalar; }
  bool isNumeric() const;
  bool isIntegral() const; // int literal or integer dtype (not bool)
  bool isFloating() const; // float literal or float dtype
  bool isBool() const { return k == Scalar && dt == DType::Bool; }
  bool operator==(const Type &o) const { return k == o.k && (k != Scalar || dt == o.dt); }
  bool operator!=(const Type &o) const { return !(*this == o); }

  std::string str() const;

private:
  explicit Type(Kind k, DType dt = DType::I32) : k(k), dt(dt) {}
  Kind k = Error;
  DType dt = DType::I32;
};

// Usual arithmetic conversions for a binary numeric operator.
Type promote(Type a, Type b);
// A literal used where no concrete type forces it: int -> i32, float -> f32.
Type materialize(Type t);

} // namespace tlc

#include "Types.h"

#include "llvm/ADT/StringSwitch.h"

namespace tlc {

llvm::StringRef dtypeName(DType t) {
  switch (t) {
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::F8E4M3: return "f8e4m3";
  case DType::F8E5M2: return "f8e5m2";
  case DType::I4: return "i4";
  case DType::U4: return "u4";
  case DType::I8: return "i8";
  case DType::U8: return "u8";
  case DType::I16: return "i16";
  case DType::I32: return "i32";
  case DType::U32: return "u32";
  case DType::I64: return "i64";
  case DType::Bool: return "bool";
  case DType::F4E2M1: return "f4e2m1";
  }
  return "?";
}

std::optional<DType> parseDType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("f16", DType::F16).Case("bf16", DType::BF16).Case("f32", DType::F32)
      .Case("f64", DType::F64).Case("f8e4m3", DType::F8E4M3).Case("f8e5m2", DType::F8E5M2)
      .Case("i4", DType::I4).Case("u4", DType::U4).Case("i8", DType::I8).Case("u8", DType::U8)
      .Case("i16", DType::I16).Case("i32", DType::I32).Case("u32", DType::U32)
      .Case("i64", DType::I64).Case("bool", DType::Bool).Case("f4e2m1", DType::F4E2M1)
      .Default(std::nullopt);
}

bool isFloat(DType t) {
  switch (t) {
  case DType::F16: case DType::BF16: case DType::F32: case DType::F64:
  case DType::F8E4M3: case DType::F8E5M2: case DType::F4E2M1:
    return true;
  default:
    return false;
  }
}

bool isInteger(DType t) { return !isFloat(t) && t != DType::Bool; }

bool isSigned(DType t) {
  return t == DType::I4 || t == DType::I8 || t == DType::I16 || t == DType::I32 ||
         t == DType::I64 || isFloat(t);
}

bool isPacked(DType t) { return bitWidth(t) == 4; }

unsigned bitWidth(DType t) {
  switch (t) {
  case DType::I4: case DType::U4: case DType::F4E2M1: return 4;
  case DType::F8E4M3: case DType::F8E5M2: case DType::I8: case DType::U8: case DType::Bool:
    return 8;
  case DType::F16: case DType::BF16: case DType::I16: return 16;
  case DType::F32: case DType::I32: case DType::U32: return 32;
  case DType::F64: case DType::I64: return 64;
  }
  return 32;
}

llvm::StringRef policyName(WarpPolicy p) {
  switch (p) {
  case WarpPolicy::FullRow: return "full_row";
  case WarpPolicy::FullCol: return "full_col";
  case WarpPolicy::Square: return "square";
  }
  return "?";
}

bool Type::isNumeric() const {
  return k == IntLiteral || k == FloatLiteral || (k == Scalar && dt != DType::Bool);
}
bool Type::isIntegral() const { return k == IntLiteral || (k == Scalar && isInteger(dt)); }
bool Type::isFloating() const { return k == FloatLiteral || (k == Scalar && isFloat(dt)); }

std::string Type::str() const {
  switch (k) {
  case Error: return "<error>";
  case Void: return "void";
  case IntLiteral: return "int";
  case FloatLiteral: return "float";
  case Scalar: return dtypeName(dt).str();
  case DTypeValue: return "dtype";
  case PolicyValue: return "policy";
  case String: return "string";
  case Buffer: return "buffer";
  case Layout: return "layout";
  }
  return "?";
}

// Rank of a float type for promotion: f16 and bf16 meet at f32 since neither holds the other.
static int floatRank(DType t) {
  switch (t) {
  case DType::F4E2M1: case DType::F8E4M3: case DType::F8E5M2: return 0;
  case DType::F16: case DType::BF16: return 1;
  case DType::F32: return 2;
  default: return 3;
  }
}

Type promote(Type a, Type b) {
  if (a.isError() || b.isError())
    return Type::error();
  if (a.kind() == Type::IntLiteral && b.kind() == Type::IntLiteral)
    return a;
  if (a.kind() == Type::FloatLiteral && b.kind() == Type::FloatLiteral)
    return a;
  // One literal: the concrete side wins, except a float literal with an integer makes f32.
  if (!a.isScalar() || !b.isScalar()) {
    Type lit = a.isScalar() ? b : a;
    Type con = a.isScalar() ? a : b;
    if (!con.isScalar())
      return Type::floatLiteral(); // int literal with float literal
    if (lit.kind() == Type::FloatLiteral && !isFloat(con.dtype()))
      return Type::scalar(DType::F32);
    return con;
  }
  DType x = a.dtype(), y = b.dtype();
  if (x == y)
    return a;
  if (isFloat(x) && isFloat(y)) {
    if (floatRank(x) == floatRank(y))
      return Type::scalar(DType::F32);
    return floatRank(x) > floatRank(y) ? a : b;
  }
  if (isFloat(x))
    return a;
  if (isFloat(y))
    return b;
  // Integers: the wider wins; at equal width the unsigned one, as in C. Either way the
  // result does not depend on the operand order.
  if (bitWidth(x) != bitWidth(y))
    return bitWidth(x) > bitWidth(y) ? a : b;
  return isSigned(x) ? b : a;
}

Type materialize(Type t) {
  if (t.kind() == Type::IntLiteral)
    return Type::scalar(DType::I32);
  if (t.kind() == Type::FloatLiteral)
    return Type::scalar(DType::F32);
  return t;
}

} // namespace tlc

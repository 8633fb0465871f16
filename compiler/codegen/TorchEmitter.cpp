// --emit=torch: the CUDA of emitCuda followed by a PyTorch extension that registers every
// public launcher as an op of one torch library (TORCH_LIBRARY, CUDA dispatch key):
//
//   torch.ops.NS.KERNEL(tensors..., scalars...) -> ()   writes the `out` tensors passed to it
//   torch.ops.NS.KERNEL_alloc(inputs..., scalars...) -> Tensor or (Tensor, ...)
//                                                      allocates the outputs and returns them
//
// An op only converts: tensors become tlc::TensorView and the launcher checks them (shapes,
// dtypes, strides, overlap) and reports through its Status, which runtime/tlc/torch.h turns
// into a RuntimeError. The ops launch on the current stream of the tensors' device and allocate
// only through torch, so they can be captured into CUDA graphs.
#include "codegen/CudaEmitter.h"

#include "codegen/CodeWriter.h"
#include "lower/Naming.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

namespace tlc::codegen {

using lower::cEscaped;
using lower::cppName;
using lower::generatedName;
using lower::HostParam;
using lower::Launch;

namespace {

// Python keywords (and the names TorchScript's schema lexer reserves) cannot name an argument
// or an op that Python calls by name.
bool isPythonKeyword(llvm::StringRef name) {
  return llvm::StringSwitch<bool>(name)
      .Cases("False", "None", "True", "and", "as", "assert", "async", "await", true)
      .Cases("break", "class", "continue", "def", "del", "elif", "else", "except", true)
      .Cases("finally", "for", "from", "global", "if", "import", "in", "is", true)
      .Cases("lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", true)
      .Cases("while", "with", "yield", "Ellipsis", "NoneType", true)
      .Default(false);
}

// How a scalar travels: the schema type, the C++ type the dispatcher passes for it, and the
// conversion to the launcher's host type (lower/Launch.cpp: float, double, bool, int,
// unsigned, long long).
struct ScalarTravel {
  std::string schema, cpp, convert;
};
ScalarTravel scalarTravel(const HostParam &p) {
  std::string literal = "\"" + cEscaped(p.name) + "\"";
  if (p.hostType == "float")
    return {"float", "double", "static_cast<float>(" + p.cpp + ")"};
  if (p.hostType == "double")
    return {"float", "double", p.cpp};
  if (p.hostType == "bool")
    return {"bool", "bool", p.cpp};
  return {"int", "int64_t", generatedName("call") + ".integer<" + p.hostType + ">(" + literal + ", " + p.cpp + ")"};
}

std::string viewName(const HostParam &p) { return generatedName(p.name + "_view"); }

// The arguments of Call::view after the tensor: an i4/u4/f4e2m1 parameter's dtype, whose tensor holds
// the packed bytes (runtime/tlc/torch.h).
std::string viewExtra(const HostParam &p) {
  return p.packed() ? ", " + p.dtype : "";
}

// Schema alias sets of the written tensors: a, b, ... (then o26, o27, ...).
std::string aliasSet(size_t i) { return i < 26 ? std::string(1, char('a' + i)) : "o" + std::to_string(i); }

// Whether every output's shape follows from the inputs: each shape symbol not bound by -D is
// the extent of some input's dimension (derived extents are expressions of symbols).
bool outputsFollowFromInputs(const Launch &k) {
  if (llvm::none_of(k.params, [](const HostParam &p) { return p.isOut; }))
    return false;
  for (const lower::HostShapeSymbol &s : k.symbols) {
    if (!s.constant.empty())
      continue;
    bool bound = llvm::any_of(k.params, [&](const HostParam &p) {
      return !p.scalar && !p.isOut && llvm::is_contained(p.symbol, s.name);
    });
    if (!bound)
      return false;
  }
  return true;
}

class TorchOps {
public:
  TorchOps(const EmitOptions &options, CodeWriter &w)
      : ns(launcherNamespace(options)), torchNs(torchNamespace(options)), w(w) {}

  // The op's function and schema, and the allocating variant's when there is one.
  void emit(const Launch &k) {
    std::string name = cppName(k.kernel);
    emitWriting(k, name);
    if (outputsFollowFromInputs(k)) {
      w.line();
      emitAllocating(k, name);
    } else if (llvm::any_of(k.params, [](const HostParam &p) { return p.isOut; })) {
      w.line("// No " + torchAllocName(k.kernel) + ": a shape symbol of an output is no input's extent.");
      defs.push_back("// no " + torchAllocName(k.kernel) + " (an output's shape symbol is no input's extent)");
    }
  }

  void finish() {
    w.line();
    w.line("}  // namespace " + generatedName("torch"));
    w.line("}  // namespace " + ns);
    w.line();
    w.line("// The ops' schemas (torch.ops." + torchNs + ".*) and their CUDA implementations.");
    w.open("TORCH_LIBRARY(" + torchNs + ", " + generatedName("library") + ")");
    for (const std::string &d : defs)
      w.line(d);
    w.close();
    w.open("TORCH_LIBRARY_IMPL(" + torchNs + ", CUDA, " + generatedName("library") + ")");
    for (const std::string &i : impls)
      w.line(i);
    w.close();
  }

private:
  // The Call: on the device of the first tensor of `tensors`.
  void openCall(const Launch &k, const std::vector<const HostParam *> &tensors) {
    std::string kernel = "\"" + cEscaped(k.kernel) + "\"";
    if (tensors.empty())
      w.line("const tlc::torch_ops::Call " + generatedName("call") + "(" + kernel + ");");
    else
      w.line("const tlc::torch_ops::Call " + generatedName("call") + "(" + kernel + ", \"" +
             cEscaped(tensors.front()->name) + "\", " + tensors.front()->cpp + ");");
  }
  void emitViews(const std::vector<const HostParam *> &tensors) {
    for (const HostParam *p : tensors)
      w.line("const tlc::TensorView " + viewName(*p) + " = " + generatedName("call") + ".view(\"" + cEscaped(p->name) +
             "\", " + p->cpp + viewExtra(*p) + ");");
  }
  void emitLaunch(const Launch &k, const std::string &name) {
    std::string args;
    for (const HostParam &p : k.params)
      args += (p.scalar ? scalarTravel(p).convert : viewName(p)) + ", ";
    w.line(generatedName("call") + ".check(::" + ns + "::" + name + "(" + args + generatedName("call") + ".stream()));");
  }
  std::string schemaArg(const HostParam &p, std::string type) {
    return type + " " + torchName(p.name);
  }
  void addOp(const std::string &schema, const std::string &op, const std::string &function) {
    defs.push_back(generatedName("library") + ".def(\"" + schema + "\");");
    impls.push_back(generatedName("library") + ".impl(\"" + op + "\", &::" + ns + "::" + generatedName("torch") + "::" + function + ");");
  }

  // KERNEL(tensors..., scalars...) -> (): every tensor parameter, outputs written in place.
  void emitWriting(const Launch &k, const std::string &name) {
    std::string params, schema, writes;
    std::vector<const HostParam *> tensors;
    size_t outs = 0;
    for (const HostParam &p : k.params) {
      params += (params.empty() ? "" : ", ") + (p.scalar ? scalarTravel(p).cpp : "const at::Tensor&") + " " + p.cpp;
      std::string type = p.scalar ? scalarTravel(p).schema : p.isOut ? "Tensor(" + aliasSet(outs++) + "!)" : "Tensor";
      schema += (schema.empty() ? "" : ", ") + schemaArg(p, type);
      if (!p.scalar)
        tensors.push_back(&p);
      if (p.isOut)
        writes += (writes.empty() ? "" : ", ") + p.name;
    }
    std::string op = torchName(k.kernel);
    w.line("// torch.ops." + torchNs + "." + op + ": kernel '" + k.kernel + "' on the current stream of its tensors' device" +
           (writes.empty() ? "." : "; writes " + writes + "."));
    w.open("void " + name + "(" + params + ")");
    openCall(k, tensors);
    emitViews(tensors);
    emitLaunch(k, name);
    w.close();
    defs.push_back("// kernel '" + k.kernel + "'");
    addOp(op + "(" + schema + ") -> ()", op, name);
  }

  // KERNEL_alloc(inputs..., scalars...) -> outputs: the outputs from torch.empty, shaped by the
  // inputs' extents (the launcher then checks the inputs against each other).
  void emitAllocating(const Launch &k, const std::string &name) {
    std::string params, schema, returnType, returned;
    std::vector<const HostParam *> inputs, outputs;
    for (const HostParam &p : k.params) {
      if (p.isOut) {
        outputs.push_back(&p);
        continue;
      }
      params += (params.empty() ? "" : ", ") + (p.scalar ? scalarTravel(p).cpp : "const at::Tensor&") + " " + p.cpp;
      schema += (schema.empty() ? "" : ", ") + schemaArg(p, p.scalar ? scalarTravel(p).schema : "Tensor");
      if (!p.scalar)
        inputs.push_back(&p);
    }
    std::string schemaReturn, writes;
    for (const HostParam *o : outputs) {
      schemaReturn += (schemaReturn.empty() ? "" : ", ") + std::string("Tensor");
      returned += (returned.empty() ? "" : ", ") + o->cpp;
      writes += (writes.empty() ? "" : ", ") + o->name;
    }
    if (outputs.size() == 1) {
      returnType = "at::Tensor";
    } else {
      returnType = "std::tuple<";
      for (size_t i = 0; i < outputs.size(); ++i)
        returnType += (i ? ", " : "") + std::string("at::Tensor");
      returnType += ">";
      schemaReturn = "(" + schemaReturn + ")";
      returned = "std::make_tuple(" + returned + ")";
    }
    std::string op = torchAllocName(k.kernel);
    w.line("// torch.ops." + torchNs + "." + op + ": the same on outputs it allocates (uninitialized) and returns: " +
           writes + ".");
    w.open(returnType + " " + name + "_alloc(" + params + ")");
    openCall(k, inputs);
    emitViews(inputs);
    w.line("// Shape symbols from the inputs' extents (the launcher checks that the inputs agree).");
    for (const lower::HostShapeSymbol &s : k.symbols) {
      if (!s.constant.empty()) {
        w.line("[[maybe_unused]] const int64_t " + s.cpp + " = " + s.constant + ";  // bound by -D at compile time");
        continue;
      }
      for (const HostParam *p : inputs) {
        auto dim = llvm::find(p->symbol, s.name);
        if (dim == p->symbol.end())
          continue;
        w.line("[[maybe_unused]] const int64_t " + s.cpp + " = tlc::dimOrZero(" + viewName(*p) + ", " +
               std::to_string(dim - p->symbol.begin()) + ");");
        break;
      }
    }
    // Output shapes use launch arithmetic; a zero divisor gives an empty output, and the
    // launcher called below reports it.
    w.line(std::string("[[maybe_unused]] bool ") + lower::kZeroDivisorFlag + " = false;");
    for (const HostParam *o : outputs) {
      std::string shape;
      for (size_t d = 0; d < o->symbol.size(); ++d)
        shape += (d ? ", " : "") + (o->symbol[d].empty() ? o->extent[d] : cppName(o->symbol[d]));
      w.line("const at::Tensor " + o->cpp + " = " + generatedName("call") + ".empty(\"" + cEscaped(o->name) + "\", " +
             (shape.empty() ? "c10::IntArrayRef()" : "{" + shape + "}") + ", " + o->dtype + ");");
      w.line("const tlc::TensorView " + viewName(*o) + " = " + generatedName("call") + ".view(\"" + cEscaped(o->name) +
             "\", " + o->cpp + viewExtra(*o) + ");");
    }
    emitLaunch(k, name);
    w.line("return " + returned + ";");
    w.close();
    addOp(op + "(" + schema + ") -> " + schemaReturn, op, name + "_alloc");
  }

  std::string ns, torchNs;
  CodeWriter &w;
  std::vector<std::string> defs, impls;
};

} // namespace

std::string torchName(llvm::StringRef name) { return isPythonKeyword(name) ? (name + "_").str() : name.str(); }

std::string torchAllocName(llvm::StringRef kernel) { return (kernel + "_alloc").str(); }

std::string torchNamespace(const EmitOptions &options) { return lower::flatNamespace(launcherNamespace(options)); }

void emitTorchOps(const std::vector<KernelInput> &kernels, const std::vector<ShapeDispatch> &dispatches,
                  const EmitOptions &options, CodeWriter &w) {
  w.line("// ---- PyTorch ops (tlc --emit=torch): build with torch.utils.cpp_extension, -I tlc's stdlib/ and runtime/,");
  w.line("// and load with torch.ops.load_library (README.md, docs/language.md).");
  w.line("#include \"tlc/torch.h\"");
  w.line();
  w.line("namespace " + launcherNamespace(options) + " {");
  w.line("namespace " + generatedName("torch") + " {");
  w.line();
  TorchOps ops(options, w);
  bool first = true;
  for (const Launch *k : publicLaunches(kernels, dispatches)) {
    if (!first)
      w.line();
    first = false;
    ops.emit(*k);
  }
  ops.finish();
}

} // namespace tlc::codegen

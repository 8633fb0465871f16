#include "ASTPrinter.h"

#include "llvm/Support/SourceMgr.h"

namespace tlc {

using llvm::cast;
using llvm::dyn_cast;

namespace {

class ASTPrinter {
public:
  ASTPrinter(llvm::SourceMgr &sm, llvm::raw_ostream &os) : sm(sm), os(os) {}

  void print(const Program &p) {
    os << "program '" << p.fileName << "'\n";
    indent = 1;
    for (const ConstDecl *c : p.consts) {
      line() << "const " << c->getName() << " : " << c->type.str();
      printValue(c->constant);
      os << loc(c->getRange()) << "\n";
    }
    for (const KernelDecl *k : p.kernels)
      printKernel(*k);
  }

private:
  llvm::raw_ostream &line() { return os.indent(indent * 2); }

  std::string loc(llvm::SMRange r) {
    if (!r.isValid())
      return "";
    auto lc = sm.getLineAndColumn(r.Start);
    return " <" + std::to_string(lc.first) + ":" + std::to_string(lc.second) + ">";
  }

  void printValue(const std::optional<ConstValue> &v) {
    if (v)
      os << " = " << v->str();
  }

  // `expr : type` plus ` = value` when folding changed the spelling.
  std::string expr(const Expr *e) {
    if (!e)
      return "<none>";
    std::string s = toSource(e) + " : " + e->type.str();
    if (e->constant && e->constant->str() != toSource(e))
      s += " = " + e->constant->str();
    return s;
  }

  void printKernel(const KernelDecl &k) {
    line() << "kernel " << k.name << loc(k.nameRange) << "\n";
    ++indent;
    for (const CompileParamDecl *p : k.compileParams) {
      line() << "compile-param " << p->getName() << " : " << p->type.str();
      if (p->isAuto && !p->constant) {
        os << " = auto";
        if (!p->autoCandidates.empty()) {
          os << "(";
          for (size_t i = 0; i < p->autoCandidates.size(); ++i)
            os << (i ? ", " : "") << toSource(p->autoCandidates[i]);
          os << ")";
        }
      } else {
        printValue(p->constant);
      }
      if (p->source == CompileParamDecl::Source::CommandLine)
        os << " (from -D)";
      os << loc(p->getRange()) << "\n";
    }
    for (const TensorParamDecl *p : k.params) {
      if (p->isScalar()) {
        line() << "scalar-param " << p->getName() << " : " << dtypeName(p->elemType);
      } else {
        line() << "tensor-param " << p->getName() << " : " << (p->isOut ? "out " : "in ")
               << dtypeName(p->elemType) << p->shape.str();
      }
      os << loc(p->getRange()) << "\n";
    }
    for (const ShapeSymbolDecl *s : k.shapeSymbols) {
      line() << "shape-symbol " << s->getName() << " : " << s->type.str();
      if (s->constant)
        os << " = " << s->constant->str() << " (from -D)";
      else
        os << " (dynamic)";
      os << "\n";
    }
    line() << "grid";
    for (const Expr *g : k.grid)
      os << " [" << expr(g) << "]";
    os << "\n";
    line() << "threads " << expr(k.threads) << "\n";
    for (size_t i = 0; i < k.blockIndices.size(); ++i)
      line() << "block-index " << k.blockIndices[i]->getName() << " : i32 = blockIdx."
             << "xyz"[i < 3 ? i : 2] << "\n";
    line() << "body\n";
    ++indent;
    printBlock(k.body);
    indent -= 2;
  }

  void printBlock(const BlockStmt *b) {
    for (const Stmt *s : b->body)
      printStmt(s);
  }

  void printStmt(const Stmt *s) {
    switch (s->getKind()) {
    case Stmt::SK_Alloc: {
      const BufferDecl *b = cast<AllocStmt>(s)->buffer;
      line() << "alloc " << b->getName() << " : " << scopeName(b->scope) << " "
             << dtypeName(b->elemType) << b->shape.str() << loc(b->getRange()) << "\n";
      return;
    }
    case Stmt::SK_Let: {
      const LetDecl *d = cast<LetStmt>(s)->decl;
      line() << "let " << d->getName() << " : " << d->type.str() << " = " << expr(d->init)
             << loc(d->getRange()) << "\n";
      return;
    }
    case Stmt::SK_For: {
      auto *f = cast<ForStmt>(s);
      line() << "for";
      for (size_t i = 0; i < f->vars.size(); ++i)
        os << (i ? ", " : " ") << f->vars[i]->getName();
      os << " in " << loopKindName(f->loopKind) << "(";
      if (f->start)
        os << "[" << expr(f->start) << "], ";
      for (size_t i = 0; i < f->extents.size(); ++i)
        os << (i ? ", " : "") << "[" << expr(f->extents[i]) << "]";
      os << ")";
      if (f->stages)
        os << " stages=" << *f->stages;
      os << loc(f->getRange()) << "\n";
      ++indent;
      printBlock(f->body);
      --indent;
      return;
    }
    case Stmt::SK_If: {
      auto *i = cast<IfStmt>(s);
      line() << "if [" << expr(i->cond) << "]" << loc(i->getRange()) << "\n";
      ++indent;
      printBlock(i->thenBody);
      --indent;
      if (i->elseBody) {
        line() << "else\n";
        ++indent;
        if (auto *b = dyn_cast<BlockStmt>(i->elseBody))
          printBlock(b);
        else
          printStmt(i->elseBody);
        --indent;
      }
      return;
    }
    case Stmt::SK_Assign: {
      auto *a = cast<AssignStmt>(s);
      line() << "assign " << toSource(a->target) << " : " << a->target->type.str() << " "
             << spelling(a->op) << " " << expr(a->value) << loc(a->getRange()) << "\n";
      return;
    }
    case Stmt::SK_Call: {
      const CallExpr *c = cast<CallStmt>(s)->call;
      line() << (c->calleeKind == CalleeKind::TileOp ? "tile-op " : "call ") << c->callee << "\n";
      ++indent;
      for (const CallArg &a : c->args) {
        line();
        if (!a.keyword.empty())
          os << a.keyword << " = ";
        os << expr(a.value) << "\n";
      }
      --indent;
      return;
    }
    case Stmt::SK_Block:
      line() << "block\n";
      ++indent;
      printBlock(cast<BlockStmt>(s));
      --indent;
      return;
    }
  }

  llvm::SourceMgr &sm;
  llvm::raw_ostream &os;
  unsigned indent = 0;
};

} // namespace

void printAST(const Program &program, llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os) {
  ASTPrinter(sourceMgr, os).print(program);
}

} // namespace tlc

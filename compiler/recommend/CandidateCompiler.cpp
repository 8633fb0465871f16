#include "recommend/CandidateCompiler.h"

#include "frontend/ASTBuilder.h"
#include "frontend/Parser.h"
#include "frontend/SourceText.h"
#include "infer/Passes.h"
#include "ir/PassManager.h"

#include "TileLangLexer.h"
#include "TileLangParser.h"
#include "antlr4-runtime.h"

#include "llvm/Support/MemoryBuffer.h"

namespace tlc::recommend {

char LocatedError::ID = 0;

std::string configStr(const Config &c) {
  std::string s;
  for (const Binding &b : c)
    s += (s.empty() ? "" : " ") + b.name + "=" + b.value;
  return s;
}

// The source buffer and its parse tree, kept alive for every candidate's AST.
struct CandidateCompiler::ParsedSource {
  llvm::SourceMgr sourceMgr;
  unsigned bufferId = 0;
  std::unique_ptr<SourceText> text;
  std::unique_ptr<antlr4::ANTLRInputStream> input;
  std::unique_ptr<grammar::TileLangLexer> lexer;
  std::unique_ptr<antlr4::CommonTokenStream> tokens;
  std::unique_ptr<grammar::TileLangParser> parser;
  grammar::TileLangParser::ProgramContext *tree = nullptr;
};

namespace {

// The first "error: ..." message of a diagnostics dump, without location or source lines.
std::string firstError(llvm::StringRef text) {
  size_t at = text.find("error: ");
  if (at == llvm::StringRef::npos)
    return "rejected by the compiler";
  return text.substr(at + 7).take_until([](char ch) { return ch == '\n'; }).str();
}

llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

CandidateCompiler::CandidateCompiler(std::string fileName, std::string kernelName,
                                     std::vector<Define> defines, const target::TargetInfo &target)
    : parsed(std::make_unique<ParsedSource>()), file(std::move(fileName)),
      kernel(std::move(kernelName)), target(target), defines(std::move(defines)) {}

CandidateCompiler::~CandidateCompiler() = default;

llvm::Expected<std::unique_ptr<CandidateCompiler>>
CandidateCompiler::create(std::string source, std::string fileName, std::string kernelName,
                          std::vector<Define> defines, const target::TargetInfo &target) {
  std::unique_ptr<CandidateCompiler> cc(new CandidateCompiler(
      std::move(fileName), std::move(kernelName), std::move(defines), target));
  ParsedSource &p = *cc->parsed;
  p.bufferId = p.sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, cc->file), llvm::SMLoc());

  // The front end's own parse first: it reports lexical and syntax errors in user terms, and
  // when it accepts the text, the plain ANTLR parse below sees the same tokens.
  std::string messages;
  llvm::raw_string_ostream os(messages);
  DiagnosticEngine diags(p.sourceMgr, os);
  ASTContext probe;
  if (!parseProgram(p.bufferId, probe, diags))
    return llvm::make_error<LocatedError>(os.str());
  if (!llvm::any_of(probe.program.kernels, [&](const KernelDecl *k) { return k->name == cc->kernel; }))
    return failure(cc->file + ": no kernel named '" + cc->kernel + "'");

  p.text = std::make_unique<SourceText>(p.sourceMgr, p.bufferId);
  p.input = std::make_unique<antlr4::ANTLRInputStream>(p.text->utf8());
  p.lexer = std::make_unique<grammar::TileLangLexer>(p.input.get());
  p.lexer->removeErrorListeners();
  p.tokens = std::make_unique<antlr4::CommonTokenStream>(p.lexer.get());
  p.parser = std::make_unique<grammar::TileLangParser>(p.tokens.get());
  p.parser->removeErrorListeners();
  p.tree = p.parser->program();
  if (p.parser->getNumberOfSyntaxErrors() != 0)
    return failure(cc->file + ": the source does not parse");
  return cc;
}

std::unique_ptr<CompiledKernel> CandidateCompiler::compile(const Config &config, bool infer) const {
  auto out = std::make_unique<CompiledKernel>();
  CompiledKernel &c = *out;
  llvm::raw_string_ostream diagStream(c.diagnostics);
  c.diags = std::make_unique<DiagnosticEngine>(parsed->sourceMgr, diagStream);
  auto finish = [&] {
    diagStream.flush();
    if (!c.graph)
      c.error = firstError(c.diagnostics);
    return std::move(out);
  };
  c.ast.program.fileName = file;
  ASTBuilder(c.ast, *c.diags, *parsed->text).build(parsed->tree);
  auto &kernels = c.ast.program.kernels;
  for (KernelDecl *k : kernels)
    if (k->name == kernel)
      c.kernel = k;
  if (c.diags->hasErrors() || !c.kernel)
    return finish();
  kernels.assign(1, c.kernel);

  std::vector<Define> all = defines;
  for (const Binding &b : config)
    all.push_back({kernel, b.name, b.value, false});
  Sema sema(c.ast, *c.diags, all);
  sema.setTarget(target.limits().sharedBytesPerBlock);
  c.semaOk = sema.run();
  c.commandLineErrors = sema.commandLineErrors() != 0;
  if (!c.semaOk || !infer)
    return finish();

  std::unique_ptr<ftg::Graph> g = ftg::buildGraph(*c.kernel, *c.diags, target);
  if (!g)
    return finish();
  g->sourceName = file;
  ftg::PassManager pm;
  infer::addInferencePasses(pm);
  if (pm.run(*g, *c.diags) && !c.diags->hasErrors())
    c.graph = std::move(g);
  return finish();
}

std::string CandidateCompiler::renderError(llvm::SMRange at, const std::string &message,
                                           const std::vector<Note> &notes) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  {
    DiagnosticEngine diags(parsed->sourceMgr, os);
    auto error = diags.error(at, message);
    for (const Note &n : notes)
      error.note(n.range, n.message);
  } // the builder prints when it goes out of scope
  return os.str();
}

std::string CandidateCompiler::renderNotes(const std::vector<Note> &notes) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const Note &n : notes)
    parsed->sourceMgr.PrintMessage(os, n.range.Start, llvm::SourceMgr::DK_Note, n.message,
                                   llvm::makeArrayRef(n.range));
  return os.str();
}

} // namespace tlc::recommend

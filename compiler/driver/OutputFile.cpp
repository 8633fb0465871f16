#include "driver/OutputFile.h"
#include "driver/Options.h"

#include "llvm/Support/Errc.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace tlc::driver {

namespace {

void reportError(llvm::StringRef tool, const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), tool) << message << "\n";
}

// Devices, pipes and sockets cannot be replaced by a rename (and must not be: renaming over
// /dev/null would replace the device); they are written in place.
bool isSpecialFile(llvm::StringRef path) {
  llvm::sys::fs::file_status st;
  if (llvm::sys::fs::status(path, st))
    return false; // does not exist (yet): a new regular file
  return llvm::sys::fs::exists(st) && !llvm::sys::fs::is_regular_file(st) &&
         !llvm::sys::fs::is_directory(st);
}

// Writes and flushes; on failure reports and clears the stream's error (an error left set
// makes raw_fd_ostream's destructor abort with "IO failure on output stream").
bool writeAll(llvm::raw_fd_ostream &os, llvm::StringRef text, llvm::StringRef path,
              llvm::StringRef tool) {
  os << text;
  os.flush();
  if (!os.has_error())
    return true;
  reportError(tool, (path == "-" ? llvm::Twine("cannot write to standard output")
                                 : "cannot write '" + path + "'") +
                        ": " + os.error().message());
  os.clear_error();
  return false;
}

// A temporary file beside `path`, so that the final rename stays within one file system.
llvm::Expected<llvm::sys::fs::TempFile> tempBeside(llvm::StringRef path) {
  return llvm::sys::fs::TempFile::create(path + "-%%%%%%.tmp");
}

bool keep(llvm::sys::fs::TempFile &temp, llvm::StringRef path, llvm::StringRef tool) {
  if (llvm::Error e = temp.keep(path)) {
    reportError(tool, "cannot write '" + path + "': " + llvm::toString(std::move(e)));
    llvm::consumeError(temp.discard());
    return false;
  }
  return true;
}

} // namespace

bool outputClobbersInput(llvm::StringRef output, const std::vector<std::string> &inputs,
                         llvm::StringRef tool) {
  if (output == "-")
    return false;
  for (const std::string &input : inputs) {
    bool same = false;
    if (input != "-" && !llvm::sys::fs::equivalent(input, output, same) && same) {
      reportError(tool, "output '" + output + "' is the input file '" + input +
                            "'; refusing to overwrite it");
      return true;
    }
  }
  return false;
}

bool writeOutput(llvm::StringRef path, llvm::StringRef text, llvm::StringRef tool) {
  if (path == "-")
    return writeAll(llvm::outs(), text, path, tool);
  if (isSpecialFile(path)) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      reportError(tool, "cannot open output '" + path + "': " + ec.message());
      return false;
    }
    return writeAll(os, text, path, tool);
  }
  auto temp = tempBeside(path);
  if (!temp) {
    reportError(tool, "cannot create output '" + path + "': " + llvm::toString(temp.takeError()));
    return false;
  }
  bool written;
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    written = writeAll(os, text, path, tool);
  }
  if (!written) {
    llvm::consumeError(temp->discard());
    return false;
  }
  return keep(*temp, path, tool);
}

int produceAtomically(llvm::StringRef path, llvm::StringRef tool,
                      const std::function<int(const std::string &tempPath)> &produce) {
  if (isSpecialFile(path))
    return produce(path.str());
  auto temp = tempBeside(path);
  if (!temp) {
    reportError(tool, "cannot create output '" + path + "': " + llvm::toString(temp.takeError()));
    return kInputError;
  }
  if (int status = produce(temp->TmpName)) {
    llvm::consumeError(temp->discard());
    return status;
  }
  return keep(*temp, path, tool) ? kSuccess : kInputError;
}

int finishStandardStreams(int status, llvm::StringRef tool) {
  llvm::outs().flush();
  if (llvm::outs().has_error()) {
    reportError(tool, "cannot write to standard output: " + llvm::outs().error().message());
    llvm::outs().clear_error();
    status = status ? status : kInputError;
  }
  if (llvm::errs().has_error()) {
    llvm::errs().clear_error();
    status = status ? status : kInputError;
  }
  return status;
}

} // namespace tlc::driver

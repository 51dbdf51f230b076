// Reading a submission. A submission is data from someone who may be hostile: the judge takes only regular files that
// sit directly in the submission folder (or, for a file the exercise names as PACKAGE/NAME.py, in that one folder),
// opened without following links, bounded in size and count. A symbolic link
// (to the reference solution, or to any file the grading user can read), a hard link, a FIFO, a device or a folder
// where a source should be is refused with a message that names it, and nothing of its target is read.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace judge {

struct SubmissionLimits {
  std::size_t max_file_bytes = 1u << 20;   // one source file
  std::size_t max_total_bytes = 8u << 20;  // everything taken from the folder
  std::size_t max_entries = 4096;          // entries of the folder looked at
  std::size_t max_extra_files = 64;        // optional files taken (headers)
};

struct SubmissionFile {
  std::string name;  // a plain file name, or PACKAGE/NAME.py for a required file of a Python package
  std::string content;
};

struct SubmissionRead {
  bool ok = false;
  std::string failure;                // one line a student can act on, naming the file
  std::vector<SubmissionFile> files;  // the required ones first, in the order asked, then the optional ones
};

// Reads `required` (each must exist) and every other entry whose name `optional` accepts (headers beside the
// sources), from `folder` itself (never below it, but for a required PACKAGE/NAME: one folder, not a link to one). `folder` must be a folder, not a link to one.
SubmissionRead read_submission(const std::filesystem::path& folder, const std::vector<std::string>& required,
                               const std::function<bool(const std::string&)>& optional,
                               const SubmissionLimits& limits = {});

}  // namespace judge

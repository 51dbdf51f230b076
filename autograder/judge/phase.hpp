// The judge's phase, for whoever waits on a running grade (`course grade`, `course watch`): phase.json in the report
// folder, {"phase": "starting" | "compiling" | "linking" | "checks" | "done", "text": "<one line>"}, as
// autograder/schemas/phase.schema.json declares. The judge says where it is, so no reader guesses it from the names in
// its private work folder.
#pragma once
#include <filesystem>
#include <string>

namespace judge {

// Replaces out_dir/phase.json atomically (a temporary file renamed over it): a reader never sees half of one. Never
// throws; an out_dir that is empty or cannot be written is left alone (the phase is for people, never for a verdict).
void write_phase(const std::filesystem::path& out_dir, const std::string& phase, const std::string& text);

}  // namespace judge

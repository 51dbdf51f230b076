// SHA-256 (FIPS 180-4), for evidence files: a worker announces a file's digest before it runs submission code, and
// the judge reads the file only if it still has that digest (the submission could have rewritten it afterwards).
#pragma once
#include <filesystem>
#include <string>

namespace judge {

std::string sha256_hex(const std::string& data);
// The digest of a file of at most `max_bytes`; "" when it cannot be read or is larger.
std::string sha256_file(const std::filesystem::path& path, std::size_t max_bytes = 256u << 20);

}  // namespace judge

#include "engine/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "engine/check.h"

namespace rewy::io {
namespace {

void fsync_path(const std::string& p, bool directory) {
  const int fd = ::open(p.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  REWY_CHECK(fd >= 0, "cannot open '{}' to sync it: {}", p, std::strerror(errno));
  const int r = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  REWY_CHECK(r == 0, "fsync of '{}' failed: {}", p, std::strerror(err));
}

}  // namespace

void atomic_write(const std::string& path, const std::function<void(const std::string& tmp_path)>& write) {
  const std::string tmp = path + ".tmp";
  try {
    write(tmp);
    fsync_path(tmp, false);
    REWY_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, "cannot rename '{}' to '{}': {}", tmp, path,
               std::strerror(errno));
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  fsync_path(dir.empty() ? "." : dir.string(), true);
}

}  // namespace rewy::io

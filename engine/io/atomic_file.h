// All-or-nothing file writes, for outputs and checkpoints that must never be seen half-written.
#pragma once
#include <functional>
#include <string>

namespace rewy::io {

// `write` fills `<path>.tmp`; that file is then fsync'ed and renamed over `path` (atomic on POSIX),
// and the directory is fsync'ed so that the rename survives a crash. If `write` throws, the
// temporary file is removed, `path` is left as it was, and the exception propagates.
void atomic_write(const std::string& path, const std::function<void(const std::string& tmp_path)>& write);

}  // namespace rewy::io

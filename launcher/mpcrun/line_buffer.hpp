// mpcrun/line_buffer: cuts one node process's output stream into whole lines.
//
// mpcrun writes the output of all node processes to its own stdout and
// stderr; writing only whole lines (each batch in one write) is what keeps
// the lines of different node processes from mixing. A line longer than
// max_line is cut into pieces of max_line bytes, each ended by a newline, and
// an unterminated last line gets a newline at the end of the stream.
#pragma once

#include <cstddef>
#include <string>

namespace mpc::launcher {

class LineBuffer {
  public:
    explicit LineBuffer(size_t max_line = size_t{1} << 20) : max_line_(max_line) {}

    // Takes the bytes read; returns the lines now complete, '\n' included.
    std::string feed(const char* data, size_t size);
    // End of stream: the unterminated rest with a newline, or nothing.
    std::string finish();
    size_t pending() const { return partial_.size(); }

  private:
    std::string partial_;
    size_t max_line_;
};

}  // namespace mpc::launcher

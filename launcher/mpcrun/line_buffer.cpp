// Line cutting of node process output: see line_buffer.hpp.
#include "line_buffer.hpp"

namespace mpc::launcher {

std::string LineBuffer::feed(const char* data, size_t size) {
    partial_.append(data, size);
    std::string out;
    size_t last_newline = partial_.rfind('\n');
    if (last_newline != std::string::npos) {
        out = partial_.substr(0, last_newline + 1);
        partial_.erase(0, last_newline + 1);
    }
    while (partial_.size() >= max_line_) {  // no newline in sight: cut the line
        out.append(partial_, 0, max_line_);
        out += '\n';
        partial_.erase(0, max_line_);
    }
    return out;
}

std::string LineBuffer::finish() {
    std::string out;
    out.swap(partial_);
    if (!out.empty()) out += '\n';
    return out;
}

}  // namespace mpc::launcher

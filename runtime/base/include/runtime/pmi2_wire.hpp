// runtime/pmi2_wire: the PMI-2 wire format, shared by the client (the
// bootstrap of a node process) and the server (mpcrun).
//
// A PMI-2 message is "cmd=NAME;key=value;...;" preceded by its length in six
// ASCII characters, space padded ("37    cmd=kvs-fence;..."). A ';' inside a
// value is doubled (";;"), as MPICH does; Slurm's server does not undo that,
// so the client never sends a raw ';' (see encode_value). Before its first
// PMI-2 message a client sends one PMI-1 line, "cmd=init pmi_version=2
// pmi_subversion=0\n", answered by "cmd=response_to_init ... rc=0\n".
//
// Parsing never trusts its input: malformed text is rejected with a reason,
// never read past its end. Nothing here knows about jobs or ranks.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mpc::runtime::pmi2 {

inline constexpr size_t kLengthDigits = 6;
inline constexpr size_t kMaxBody = 999999;       // what six digits can say
inline constexpr size_t kMaxKeyLength = 64;      // PMI2_MAX_KEYLEN of MPICH
inline constexpr size_t kMaxValueLength = 1024;  // PMI2_MAX_VALLEN of MPICH
inline constexpr size_t kMaxV1Line = 1024;

// One command or response: its name and its attributes, in order (a name may
// repeat, as in spawn).
class Message {
  public:
    Message() = default;
    explicit Message(std::string cmd) : cmd_(std::move(cmd)) {}

    const std::string& cmd() const { return cmd_; }
    void set_cmd(std::string cmd) { cmd_ = std::move(cmd); }
    const std::vector<std::pair<std::string, std::string>>& pairs() const { return pairs_; }

    Message& add(std::string key, std::string value);
    Message& add_int(std::string key, long value);
    Message& add_bool(std::string key, bool value);  // TRUE / FALSE

    // The first value of key, or nullptr.
    const std::string* find(std::string_view key) const;
    std::string get(std::string_view key, std::string_view fallback = {}) const;
    // False when absent or not a (whole) decimal integer.
    bool get_int(std::string_view key, long* out) const;
    // False when absent or neither TRUE nor FALSE (any case).
    bool get_bool(std::string_view key, bool* out) const;

  private:
    std::string cmd_;
    std::vector<std::pair<std::string, std::string>> pairs_;
};

// A name the wire can carry: 1..kMaxKeyLength printable characters, none of
// '=', ';' or space.
bool valid_key(std::string_view key);

// "cmd=NAME;k=v;...;" with ';' in values doubled; no length field.
std::string format_body(const Message& m);
// Length field and body. False (with *error) when a name is not valid_key or
// the body is longer than kMaxBody.
bool format_frame(const Message& m, std::string* out, std::string* error);
// A six-character length field: decimal digits, space padded on either side.
bool parse_length(std::string_view field, size_t* length);
// A body as format_body writes it; a missing ';' after the last value is
// accepted (some servers omit it).
bool parse_body(std::string_view body, Message* out, std::string* error);

// PMI-1 lines, used only for the init exchange: "cmd=NAME k=v k=v\n".
std::string format_v1_line(const Message& m);
bool parse_v1_line(std::string_view line, Message* out, std::string* error);

// Values the client stores: bytes a server's parser could trip on (';', '%',
// space, control and non-ASCII bytes) become %XX; others stay as they are,
// so hex strings and addresses pass unchanged. decode_value reverses it.
std::string encode_value(std::string_view raw);
bool decode_value(std::string_view encoded, std::string* raw);
// Binary data as lowercase hex, and back.
std::string hex_encode(const void* data, size_t size);
bool hex_decode(std::string_view hex, std::string* out);

// Blocking I/O on a connected socket; EINTR is retried, SIGPIPE avoided.
bool write_all(int fd, std::string_view data);
// One frame; false on end of stream, an I/O error or a malformed frame.
bool read_frame(int fd, Message* out, std::string* error);
// One PMI-1 line, read byte by byte so that nothing after '\n' is consumed.
bool read_v1_line(int fd, Message* out, std::string* error);

// Incremental decoder for a non-blocking server: feed the bytes read, then
// take complete messages. A message that starts with "cmd=" is a PMI-1 line.
class StreamDecoder {
  public:
    enum class Result { kNeedMore, kMessage, kError };

    void feed(const char* data, size_t size);
    // The next complete message; *v1 tells whether it was a PMI-1 line.
    Result next(Message* out, bool* v1, std::string* error);
    size_t buffered() const { return buf_.size() - pos_; }

  private:
    std::string buf_;
    size_t pos_ = 0;
};

}  // namespace mpc::runtime::pmi2

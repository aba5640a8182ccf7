// PMI-2 wire format: see runtime/pmi2_wire.hpp.
#include "runtime/pmi2_wire.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

namespace mpc::runtime::pmi2 {
namespace {

// A decimal long; false when malformed or out of range (the text comes from
// the other side of the connection: no overflow on any input).
bool parse_long(std::string_view text, long* out) {
    if (text.empty() || text.size() > 20) return false;
    size_t i = 0;
    bool negative = false;
    if (text[0] == '-' || text[0] == '+') {
        negative = text[0] == '-';
        if (++i == text.size()) return false;
    }
    const unsigned long limit = negative ? 0ul - static_cast<unsigned long>(LONG_MIN) : LONG_MAX;
    unsigned long v = 0;
    for (; i < text.size(); ++i) {
        if (text[i] < '0' || text[i] > '9') return false;
        const unsigned long digit = static_cast<unsigned long>(text[i] - '0');
        if (v > (limit - digit) / 10) return false;
        v = v * 10 + digit;
    }
    *out = negative ? static_cast<long>(0ul - v) : static_cast<long>(v);
    return true;
}

bool equals_nocase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
    return true;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

const char kHex[] = "0123456789abcdef";

bool fail(std::string* error, const std::string& why) {
    if (error) *error = why;
    return false;
}

// Reads exactly size bytes; false on end of stream or error.
bool read_exact(int fd, char* out, size_t size, std::string* error) {
    size_t done = 0;
    while (done < size) {
        ssize_t n = read(fd, out + done, size - done);
        if (n > 0) {
            done += static_cast<size_t>(n);
        } else if (n == 0) {
            return fail(error, "the PMI connection was closed");
        } else if (errno != EINTR) {
            return fail(error,
                        std::string("reading the PMI connection failed: ") + strerror(errno));
        }
    }
    return true;
}

}  // namespace

Message& Message::add(std::string key, std::string value) {
    pairs_.emplace_back(std::move(key), std::move(value));
    return *this;
}

Message& Message::add_int(std::string key, long value) {
    return add(std::move(key), std::to_string(value));
}

Message& Message::add_bool(std::string key, bool value) {
    return add(std::move(key), value ? "TRUE" : "FALSE");
}

const std::string* Message::find(std::string_view key) const {
    for (const auto& [k, v] : pairs_)
        if (k == key) return &v;
    return nullptr;
}

std::string Message::get(std::string_view key, std::string_view fallback) const {
    const std::string* v = find(key);
    return v ? *v : std::string(fallback);
}

bool Message::get_int(std::string_view key, long* out) const {
    const std::string* v = find(key);
    return v && parse_long(*v, out);
}

bool Message::get_bool(std::string_view key, bool* out) const {
    const std::string* v = find(key);
    if (!v) return false;
    if (equals_nocase(*v, "TRUE"))
        *out = true;
    else if (equals_nocase(*v, "FALSE"))
        *out = false;
    else
        return false;
    return true;
}

bool valid_key(std::string_view key) {
    if (key.empty() || key.size() > kMaxKeyLength) return false;
    for (char c : key)
        if (c <= ' ' || c > '~' || c == '=' || c == ';') return false;
    return true;
}

std::string format_body(const Message& m) {
    std::string out = "cmd=" + m.cmd() + ";";
    for (const auto& [k, v] : m.pairs()) {
        out += k;
        out += '=';
        for (char c : v) {
            if (c == ';') out += ';';  // escaped as ";;"
            out += c;
        }
        out += ';';
    }
    return out;
}

bool format_frame(const Message& m, std::string* out, std::string* error) {
    if (!valid_key(m.cmd())) return fail(error, "invalid command name '" + m.cmd() + "'");
    for (const auto& kv : m.pairs())
        if (!valid_key(kv.first)) return fail(error, "invalid attribute name '" + kv.first + "'");
    std::string body = format_body(m);
    if (body.size() > kMaxBody) return fail(error, "message too long for PMI-2");
    char field[kLengthDigits + 1];
    snprintf(field, sizeof(field), "%-6zu", body.size());
    *out = std::string(field, kLengthDigits) + body;
    return true;
}

bool parse_length(std::string_view field, size_t* length) {
    if (field.size() != kLengthDigits) return false;
    size_t i = 0;
    while (i < field.size() && field[i] == ' ') ++i;
    size_t start = i;
    size_t v = 0;
    while (i < field.size() && field[i] >= '0' && field[i] <= '9') v = v * 10 + (field[i++] - '0');
    if (i == start) return false;
    while (i < field.size() && field[i] == ' ') ++i;
    if (i != field.size()) return false;
    *length = v;
    return true;
}

bool parse_body(std::string_view body, Message* out, std::string* error) {
    Message m;
    size_t pos = 0;
    bool first = true;
    while (pos < body.size()) {
        size_t eq = body.find('=', pos);
        if (eq == std::string_view::npos) return fail(error, "attribute without '='");
        std::string_view key = body.substr(pos, eq - pos);
        if (!valid_key(key)) return fail(error, "invalid attribute name");
        std::string value;
        size_t i = eq + 1;
        for (;; ++i) {
            if (i == body.size()) break;  // last value without its ';'
            if (body[i] == ';') {
                if (i + 1 < body.size() && body[i + 1] == ';') {
                    value += ';';
                    ++i;
                    continue;
                }
                break;
            }
            if (body[i] == '\0') return fail(error, "NUL byte in a value");
            value += body[i];
        }
        pos = i + 1;
        if (first) {
            if (key != "cmd") return fail(error, "message does not start with cmd=");
            if (!valid_key(value)) return fail(error, "invalid command name");
            m.set_cmd(std::move(value));
            first = false;
        } else {
            m.add(std::string(key), std::move(value));
        }
    }
    if (first) return fail(error, "empty message");
    *out = std::move(m);
    return true;
}

std::string format_v1_line(const Message& m) {
    std::string out = "cmd=" + m.cmd();
    for (const auto& [k, v] : m.pairs()) out += " " + k + "=" + v;
    return out + "\n";
}

bool parse_v1_line(std::string_view line, Message* out, std::string* error) {
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    Message m;
    bool first = true;
    size_t pos = 0;
    while (pos < line.size()) {
        if (line[pos] == ' ') {
            ++pos;
            continue;
        }
        size_t end = line.find(' ', pos);
        if (end == std::string_view::npos) end = line.size();
        std::string_view token = line.substr(pos, end - pos);
        pos = end;
        size_t eq = token.find('=');
        if (eq == std::string_view::npos) return fail(error, "PMI-1 token without '='");
        std::string_view key = token.substr(0, eq), value = token.substr(eq + 1);
        if (!valid_key(key)) return fail(error, "invalid PMI-1 attribute name");
        for (char c : value)
            if (c < ' ' || c == 0x7f) return fail(error, "control character in a PMI-1 value");
        if (first) {
            if (key != "cmd" || !valid_key(value)) return fail(error, "PMI-1 line without cmd=");
            m.set_cmd(std::string(value));
            first = false;
        } else {
            m.add(std::string(key), std::string(value));
        }
    }
    if (first) return fail(error, "empty PMI-1 line");
    *out = std::move(m);
    return true;
}

std::string encode_value(std::string_view raw) {
    std::string out;
    out.reserve(raw.size());
    for (unsigned char c : raw) {
        if (c <= ' ' || c > '~' || c == ';' || c == '%') {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

bool decode_value(std::string_view encoded, std::string* raw) {
    std::string out;
    out.reserve(encoded.size());
    for (size_t i = 0; i < encoded.size(); ++i) {
        if (encoded[i] != '%') {
            out += encoded[i];
            continue;
        }
        if (i + 2 >= encoded.size()) return false;
        int hi = hex_digit(encoded[i + 1]), lo = hex_digit(encoded[i + 2]);
        if (hi < 0 || lo < 0) return false;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    *raw = std::move(out);
    return true;
}

std::string hex_encode(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    std::string out(size * 2, '0');
    for (size_t i = 0; i < size; ++i) {
        out[2 * i] = kHex[p[i] >> 4];
        out[2 * i + 1] = kHex[p[i] & 15];
    }
    return out;
}

bool hex_decode(std::string_view hex, std::string* out) {
    if (hex.size() % 2) return false;
    std::string bytes(hex.size() / 2, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        bytes[i] = static_cast<char>(hi * 16 + lo);
    }
    *out = std::move(bytes);
    return true;
}

bool write_all(int fd, std::string_view data) {
    size_t done = 0;
    while (done < data.size()) {
        ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK) n = write(fd, data.data() + done, data.size() - done);
        if (n > 0)
            done += static_cast<size_t>(n);
        else if (n < 0 && errno != EINTR)
            return false;
    }
    return true;
}

bool read_frame(int fd, Message* out, std::string* error) {
    char field[kLengthDigits];
    if (!read_exact(fd, field, sizeof(field), error)) return false;
    size_t length;
    if (!parse_length(std::string_view(field, sizeof(field)), &length))
        return fail(error, "malformed PMI-2 length field");
    std::string body(length, '\0');
    if (!read_exact(fd, body.data(), length, error)) return false;
    return parse_body(body, out, error);
}

bool read_v1_line(int fd, Message* out, std::string* error) {
    std::string line;
    char c = 0;
    while (c != '\n') {
        if (line.size() >= kMaxV1Line) return fail(error, "PMI-1 line too long");
        if (!read_exact(fd, &c, 1, error)) return false;
        line += c;
    }
    return parse_v1_line(line, out, error);
}

void StreamDecoder::feed(const char* data, size_t size) {
    buf_.erase(0, pos_);  // drop what was already taken
    pos_ = 0;
    buf_.append(data, size);
}

StreamDecoder::Result StreamDecoder::next(Message* out, bool* v1, std::string* error) {
    std::string_view rest(buf_.data() + pos_, buf_.size() - pos_);
    if (rest.empty()) return Result::kNeedMore;
    if (rest[0] == 'c') {  // a PMI-1 line ("cmd=init ...")
        size_t nl = rest.find('\n');
        if (nl == std::string_view::npos) {
            if (rest.size() <= kMaxV1Line) return Result::kNeedMore;
            fail(error, "PMI-1 line too long");
            return Result::kError;
        }
        pos_ += nl + 1;
        *v1 = true;
        return parse_v1_line(rest.substr(0, nl), out, error) ? Result::kMessage : Result::kError;
    }
    if (rest.size() < kLengthDigits) return Result::kNeedMore;
    size_t length;
    if (!parse_length(rest.substr(0, kLengthDigits), &length)) {
        fail(error, "malformed PMI-2 length field");
        return Result::kError;
    }
    if (rest.size() < kLengthDigits + length) return Result::kNeedMore;
    pos_ += kLengthDigits + length;
    *v1 = false;
    return parse_body(rest.substr(kLengthDigits, length), out, error) ? Result::kMessage
                                                                      : Result::kError;
}

}  // namespace mpc::runtime::pmi2

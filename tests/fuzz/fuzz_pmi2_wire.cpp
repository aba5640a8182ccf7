// Fuzz target: the PMI-2 wire parsers the client and mpcrun's server share
// (runtime/pmi2_wire): the stream decoder fed in pieces, whole bodies, PMI-1
// lines, length fields, %XX and hex decoding, and the typed accessors on
// whatever parsed. Properties: no crash and no undefined behaviour on any
// input; a parsed message formats back to text that parses to the same
// message; encodings round-trip.
//
// Input: one mode byte, then the text.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "runtime/pmi2_wire.hpp"

using namespace mpc::runtime::pmi2;

namespace {

[[noreturn]] void broken(const char* what, std::string_view text) {
    fprintf(stderr, "fuzz_pmi2_wire: %s: '%.*s'\n", what, static_cast<int>(text.size()),
            text.data());
    abort();
}

bool same(const Message& a, const Message& b) {
    return a.cmd() == b.cmd() && a.pairs() == b.pairs();
}

// What a server or client does with a message it received.
void use(const Message& m, bool v1) {
    for (const auto& [key, value] : m.pairs()) {
        long l = 0;
        bool b = false;
        m.get_int(key, &l);
        m.get_bool(key, &b);
        std::string raw, hex;
        if (decode_value(value, &raw) && decode_value(encode_value(raw), &hex) && hex != raw)
            broken("decode(encode(x)) != x", value);
    }
    std::string error;
    Message again;
    if (!parse_body(format_body(m), &again, &error) || !same(m, again))
        broken("a parsed message does not survive format_body", format_body(m));
    std::string frame;
    if (format_frame(m, &frame, &error)) {
        StreamDecoder d;
        d.feed(frame.data(), frame.size());
        bool is_v1 = true;
        if (d.next(&again, &is_v1, &error) != StreamDecoder::Result::kMessage || is_v1 ||
            !same(m, again))
            broken("a formatted frame does not decode to its message", frame);
    }
    if (v1 && (!parse_v1_line(format_v1_line(m), &again, &error) || !same(m, again)))
        broken("a parsed PMI-1 line does not survive format_v1_line", format_v1_line(m));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const uint8_t mode = data[0];
    std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    Message m;
    std::string error;
    switch (mode % 4) {
        case 0: {  // a stream, fed in pieces of 1..64 bytes
            const size_t piece = (mode >> 2) + 1;
            StreamDecoder d;
            for (size_t at = 0; at < text.size(); at += piece) {
                d.feed(text.data() + at, std::min(piece, text.size() - at));
                for (;;) {
                    bool v1 = false;
                    auto r = d.next(&m, &v1, &error);
                    if (r == StreamDecoder::Result::kMessage)
                        use(m, v1);
                    else if (r == StreamDecoder::Result::kError)
                        return 0;  // the server hangs up
                    else
                        break;
                }
            }
            break;
        }
        case 1:
            if (parse_body(text, &m, &error)) use(m, false);
            break;
        case 2:
            if (parse_v1_line(text, &m, &error)) use(m, true);
            break;
        case 3: {
            size_t length = 0;
            if (text.size() >= kLengthDigits) parse_length(text.substr(0, kLengthDigits), &length);
            std::string raw, back;
            if (!decode_value(encode_value(text), &raw) || raw != text)
                broken("encode_value does not round-trip", text);
            if (hex_decode(text, &raw) &&
                (!hex_decode(hex_encode(raw.data(), raw.size()), &back) || back != raw))
                broken("hex does not round-trip", text);
            break;
        }
    }
    return 0;
}

// PMI-2 wire codec: format, parse, escaping, value encoding, and malformed
// input that must be rejected without crashing.
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "runtime/pmi2_wire.hpp"

using namespace mpc::runtime::pmi2;

TEST_CASE("a frame is a six-character length and the body", "[pmi2][wire]") {
    Message m("kvs-put");
    m.add("key", "a").add("value", "x;y");
    CHECK(format_body(m) == "cmd=kvs-put;key=a;value=x;;y;");
    std::string frame, error;
    REQUIRE(format_frame(m, &frame, &error));
    CHECK(frame == "29    cmd=kvs-put;key=a;value=x;;y;");
}

TEST_CASE("format then parse gives the message back", "[pmi2][wire]") {
    Message m("kvs-get-response");
    m.add_int("rc", 0).add_bool("found", true).add("value", ";;a=b;c;").add("empty", "");
    Message back;
    std::string error;
    REQUIRE(parse_body(format_body(m), &back, &error));
    CHECK(back.cmd() == "kvs-get-response");
    CHECK(back.pairs() == m.pairs());
    long rc = -1;
    bool found = false;
    CHECK(back.get_int("rc", &rc));
    CHECK(rc == 0);
    CHECK(back.get_bool("found", &found));
    CHECK(found);
    CHECK(back.get("value") == ";;a=b;c;");
    CHECK(back.get("missing", "dflt") == "dflt");
    CHECK_FALSE(back.get_int("value", &rc));
    CHECK_FALSE(back.get_bool("rc", &found));
}

TEST_CASE("a last value without its ';' is accepted", "[pmi2][wire]") {
    Message m;
    std::string error;
    REQUIRE(parse_body("cmd=kvs-fence-response;rc=0", &m, &error));
    CHECK(m.get("rc") == "0");
}

TEST_CASE("malformed bodies are rejected", "[pmi2][wire]") {
    const char* bad[] = {"",          "key=a;",       "cmd=;",    "cmd=x;novalue;",
                         "cmd=x;=v;", "cmd=x;k v=1;", "cmd=x y;", "cmdx;",
                         ";",         "cmd=x;a=\n;b;"};
    for (const char* text : bad) {
        Message m;
        std::string error;
        INFO(text);
        CHECK_FALSE(parse_body(text, &m, &error));
        CHECK_FALSE(error.empty());
    }
    Message m;
    std::string error;
    CHECK_FALSE(parse_body(std::string("cmd=x;a=b\0c;", 12), &m, &error));
}

TEST_CASE("length fields", "[pmi2][wire]") {
    size_t n = 0;
    CHECK(parse_length("12    ", &n));
    CHECK(n == 12);
    CHECK(parse_length("    12", &n));
    CHECK(parse_length("999999", &n));
    CHECK(n == 999999);
    for (const char* bad : {"", "12", "1 2   ", "abcdef", "      ", "-1    ", "12   x", "1234567"})
        CHECK_FALSE(parse_length(bad, &n));
}

TEST_CASE("invalid names are not formatted", "[pmi2][wire]") {
    std::string frame, error;
    Message bad_key("kvs-put");
    bad_key.add("k=y", "v");
    CHECK_FALSE(format_frame(bad_key, &frame, &error));
    CHECK_FALSE(format_frame(Message(""), &frame, &error));
    CHECK_FALSE(format_frame(Message(std::string(kMaxKeyLength + 1, 'a')), &frame, &error));
    Message huge("kvs-put");
    huge.add("value", std::string(kMaxBody, 'v'));
    CHECK_FALSE(format_frame(huge, &frame, &error));
}

TEST_CASE("PMI-1 init lines", "[pmi2][wire]") {
    Message m;
    std::string error;
    REQUIRE(parse_v1_line("cmd=init pmi_version=2 pmi_subversion=0\n", &m, &error));
    CHECK(m.cmd() == "init");
    CHECK(m.get("pmi_version") == "2");
    CHECK(format_v1_line(m) == "cmd=init pmi_version=2 pmi_subversion=0\n");
    for (const char* bad : {"init x=1\n", "cmd=init bogus\n", "\n", "cmd= x=1", "cmd=i x=\x01"})
        CHECK_FALSE(parse_v1_line(bad, &m, &error));
}

TEST_CASE("stored values may hold any byte", "[pmi2][wire]") {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    std::string encoded = encode_value(all);
    CHECK(encoded.find(';') == std::string::npos);
    CHECK(encoded.find(' ') == std::string::npos);
    std::string back;
    REQUIRE(decode_value(encoded, &back));
    CHECK(back == all);
    CHECK(encode_value("0a1b2c:tcp://10.0.0.1:4242") == "0a1b2c:tcp://10.0.0.1:4242");
    CHECK_FALSE(decode_value("%4", &back));
    CHECK_FALSE(decode_value("%zz", &back));
    CHECK_FALSE(decode_value("abc%", &back));
}

TEST_CASE("hex encoding", "[pmi2][wire]") {
    const unsigned char bytes[] = {0x00, 0x7f, 0xff, 0x3b};
    CHECK(hex_encode(bytes, sizeof(bytes)) == "007fff3b");
    std::string back;
    REQUIRE(hex_decode("007FFF3b", &back));
    CHECK(back == std::string("\x00\x7f\xff\x3b", 4));
    CHECK_FALSE(hex_decode("abc", &back));
    CHECK_FALSE(hex_decode("zz", &back));
}

TEST_CASE("the stream decoder finds messages in any chunking", "[pmi2][wire]") {
    std::string stream = "cmd=init pmi_version=2 pmi_subversion=0\n";
    std::vector<Message> sent;
    for (int i = 0; i < 20; ++i) {
        Message m("kvs-put");
        m.add("key", std::string("k").append(std::to_string(i)))
            .add("value", std::string(static_cast<size_t>(i), ';'));
        std::string frame, error;
        REQUIRE(format_frame(m, &frame, &error));
        stream += frame;
        sent.push_back(m);
    }
    std::mt19937 rng(42);
    for (int trial = 0; trial < 20; ++trial) {
        StreamDecoder d;
        std::vector<Message> got;
        int v1_count = 0;
        size_t pos = 0;
        while (pos < stream.size()) {
            size_t chunk = std::min(stream.size() - pos, size_t{1} + rng() % 40);
            d.feed(stream.data() + pos, chunk);
            pos += chunk;
            Message m;
            bool v1 = false;
            std::string error;
            StreamDecoder::Result r;
            while ((r = d.next(&m, &v1, &error)) == StreamDecoder::Result::kMessage) {
                if (v1)
                    ++v1_count;
                else
                    got.push_back(m);
            }
            REQUIRE(r == StreamDecoder::Result::kNeedMore);
        }
        CHECK(v1_count == 1);
        REQUIRE(got.size() == sent.size());
        for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].pairs() == sent[i].pairs());
        CHECK(d.buffered() == 0);
    }
}

TEST_CASE("the stream decoder rejects a bad length field", "[pmi2][wire]") {
    StreamDecoder d;
    d.feed("xx12  cmd=a;", 12);
    Message m;
    bool v1;
    std::string error;
    CHECK(d.next(&m, &v1, &error) == StreamDecoder::Result::kError);
}

TEST_CASE("random and mutated input never crashes the parsers", "[pmi2][wire]") {
    std::mt19937 rng(7);
    const std::string valid = "cmd=kvs-get-response;rc=0;found=TRUE;value=a;;b;";
    const char alphabet[] = "cmd=;k v\n\0%1 -";
    for (int i = 0; i < 20000; ++i) {
        std::string text = valid;
        int edits = 1 + static_cast<int>(rng() % 6);
        for (int e = 0; e < edits && !text.empty(); ++e) {
            size_t at = rng() % text.size();
            switch (rng() % 3) {
                case 0:
                    text[at] = alphabet[rng() % (sizeof(alphabet) - 1)];
                    break;
                case 1:
                    text.erase(at, 1 + rng() % 4);
                    break;
                default:
                    text.insert(at, 1, static_cast<char>(rng() % 256));
                    break;
            }
        }
        Message m;
        std::string error;
        bool v1 = false;
        if (parse_body(text, &m, &error)) CHECK(valid_key(m.cmd()));
        parse_v1_line(text, &m, &error);
        StreamDecoder d;
        std::string framed = std::to_string(text.size()) + std::string(6, ' ');
        framed = framed.substr(0, 6) + text;
        d.feed(framed.data(), framed.size());
        while (d.next(&m, &v1, &error) == StreamDecoder::Result::kMessage) {
        }
    }
}

// Found by fuzzing (tests/fuzz/inputs/pmi2_client/bad_size): a 19-digit value
// overflowed a signed long while parsing (undefined behaviour).
TEST_CASE("integers out of a long's range are rejected, the extremes accepted", "[pmi2][wire]") {
    Message m("fullinit-response");
    m.add("a", "9999999999999999999")
        .add("b", "9223372036854775807")
        .add("c", "9223372036854775808")
        .add("d", "-9223372036854775808")
        .add("e", "-9223372036854775809")
        .add("f", "+12");
    long v = 0;
    CHECK_FALSE(m.get_int("a", &v));
    REQUIRE(m.get_int("b", &v));
    CHECK(v == 9223372036854775807L);
    CHECK_FALSE(m.get_int("c", &v));
    REQUIRE(m.get_int("d", &v));
    CHECK(v == -9223372036854775807L - 1);
    CHECK_FALSE(m.get_int("e", &v));
    REQUIRE(m.get_int("f", &v));
    CHECK(v == 12);
}

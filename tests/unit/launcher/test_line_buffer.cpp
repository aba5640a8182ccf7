// mpcrun's output forwarding cuts streams into whole lines only.
#include <catch2/catch.hpp>
#include <string>

#include "line_buffer.hpp"

using mpc::launcher::LineBuffer;

TEST_CASE("partial lines wait for their newline", "[launcher][output]") {
    LineBuffer b;
    CHECK(b.feed("ab", 2).empty());
    CHECK(b.feed("c\nde", 4) == "abc\n");
    CHECK(b.pending() == 2);
    CHECK(b.feed("f\ng\nh", 5) == "def\ng\n");
    CHECK(b.finish() == "h\n");
    CHECK(b.finish().empty());
}

TEST_CASE("a stream ending with a newline adds nothing at the end", "[launcher][output]") {
    LineBuffer b;
    CHECK(b.feed("x\n\n", 3) == "x\n\n");
    CHECK(b.finish().empty());
}

TEST_CASE("an endless line is cut at the limit", "[launcher][output]") {
    LineBuffer b(4);
    CHECK(b.feed("abc", 3).empty());
    CHECK(b.feed("defghij", 7) == "abcd\nefgh\n");
    CHECK(b.feed("\n", 1) == "ij\n");
}

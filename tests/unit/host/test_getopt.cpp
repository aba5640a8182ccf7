// The per-rank getopt parser (runtime/host/getopt_engine) against glibc's own
// getopt, __posix_getopt, getopt_long and getopt_long_only: the same command
// lines, step by step (return value, optind, optarg, optopt, long index, flag
// variable), the permuted argv at the end and every error message, in fixed
// cases and thousands of random ones (this executable is not linked with the
// runtime: its getopt is glibc's).
#include <getopt.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "getopt_engine.hpp"

extern "C" int __posix_getopt(int argc, char* const* argv, const char* optstring);

namespace {

enum class Mode { Getopt, Posix, Long, LongOnly };

int g_flag = 0;
// Abbreviations of every kind: "verb" fits two options that do the same
// (not ambiguous for getopt_long), "alp" two that do not.
const struct option kLongOptions[] = {
    {"alpha", no_argument, nullptr, 'a'},
    {"alpine", required_argument, nullptr, 'p'},
    {"beta", optional_argument, nullptr, 'b'},
    {"bet", no_argument, &g_flag, 7},
    {"verbose", no_argument, &g_flag, 1},
    {"verbatim", no_argument, &g_flag, 1},
    {"size", required_argument, nullptr, 's'},
    {"c", no_argument, nullptr, 300},
    {nullptr, 0, nullptr, 0},
};

struct Case {
    Mode mode = Mode::Long;
    std::string optstring;
    std::vector<std::string> args;  // argv[1..]
    bool posixly_correct = false;
    int opterr = 1;
    int rescan_from = -1;  // after the end, set optind to this and scan again
};

std::string describe(const Case& c) {
    std::ostringstream o;
    o << "mode " << static_cast<int>(c.mode) << " optstring \"" << c.optstring << "\" opterr "
      << c.opterr << (c.posixly_correct ? " POSIXLY_CORRECT" : "") << " rescan " << c.rescan_from
      << " args:";
    for (const std::string& a : c.args) o << " [" << a << "]";
    return o.str();
}

// Everything a caller can observe of one scan.
struct Trace {
    std::vector<std::string> steps;
    std::vector<std::string> final_argv;
    std::string messages;
    bool operator==(const Trace& o) const {
        return steps == o.steps && final_argv == o.final_argv && messages == o.messages;
    }
};

// Runs fn with stderr going to a temporary file; returns what was written.
template <class Fn>
std::string capture_stderr(Fn fn) {
    fflush(stderr);
    FILE* tmp = tmpfile();
    REQUIRE(tmp);
    const int saved = dup(2);
    dup2(fileno(tmp), 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::string out;
    rewind(tmp);
    char buf[512];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), tmp)) > 0) out.append(buf, n);
    fclose(tmp);
    return out;
}

// One scan by a caller with these variables; call(argc, argv, longindex)
// makes one call and updates them.
template <class Call>
Trace scan(const Case& c, std::vector<char*> argv, int* optind_var, char** optarg_var,
           int* optopt_var, Call call) {
    Trace t;
    const int argc = static_cast<int>(argv.size());
    argv.push_back(nullptr);
    auto record = [&](int r, int longindex) {
        std::string where = "null";  // optarg as "element+offset"
        for (int i = 0; *optarg_var && i < argc; ++i) {
            const char* element = argv[static_cast<size_t>(i)];
            if (*optarg_var >= element && *optarg_var <= element + strlen(element))
                where = std::string(element) + "+" + std::to_string(*optarg_var - element);
        }
        std::ostringstream o;
        o << "r=" << r << " optind=" << *optind_var << " optarg=" << where
          << " optopt=" << *optopt_var << " longindex=" << longindex << " flag=" << g_flag;
        t.steps.push_back(o.str());
    };
    t.messages = capture_stderr([&] {
        for (int pass = 0; pass < (c.rescan_from >= 0 ? 2 : 1); ++pass) {
            if (pass == 1) *optind_var = c.rescan_from;
            for (int step = 0; step < 64; ++step) {
                int longindex = -1;
                g_flag = -5;
                const int r = call(argc, argv.data(), &longindex);
                record(r, longindex);
                if (r == -1) break;
            }
        }
    });
    for (int i = 0; i < argc; ++i) t.final_argv.emplace_back(argv[static_cast<size_t>(i)]);
    return t;
}

std::vector<char*> make_argv(const Case& c, std::vector<std::string>& storage) {
    storage.clear();
    storage.push_back("prog");
    for (const std::string& a : c.args) storage.push_back(a);
    std::vector<char*> argv;
    for (std::string& s : storage) argv.push_back(s.data());
    return argv;
}

Trace run_glibc(const Case& c, std::vector<std::string>& storage) {
    optind = 0;  // a new scan: glibc initialises again
    opterr = c.opterr;
    optarg = nullptr;
    return scan(c, make_argv(c, storage), &optind, &optarg, &optopt,
                [&](int argc, char** argv, int* longindex) {
                    switch (c.mode) {
                        case Mode::Getopt:
                            return getopt(argc, argv, c.optstring.c_str());
                        case Mode::Posix:
                            return __posix_getopt(argc, argv, c.optstring.c_str());
                        case Mode::Long:
                            return getopt_long(argc, argv, c.optstring.c_str(), kLongOptions,
                                               longindex);
                        case Mode::LongOnly:
                            return getopt_long_only(argc, argv, c.optstring.c_str(), kLongOptions,
                                                    longindex);
                    }
                    return -2;
                });
}

// Like glibc's static data, one state for every scan: optopt carries over
// from one scan to the next (a new scan does not reset it).
mpc::host::GetoptState state;

Trace run_ours(const Case& c, std::vector<std::string>& storage) {
    int my_optind = 0, my_opterr = c.opterr, my_optopt = '?';
    char* my_optarg = nullptr;
    const bool is_long = c.mode == Mode::Long || c.mode == Mode::LongOnly;
    return scan(c, make_argv(c, storage), &my_optind, &my_optarg, &my_optopt,
                [&](int argc, char** argv, int* longindex) {
                    state.optind = my_optind;
                    state.opterr = my_opterr;
                    const int r = mpc::host::getopt_step(
                        state, argc, argv, c.optstring.c_str(), is_long ? kLongOptions : nullptr,
                        is_long ? longindex : nullptr, c.mode == Mode::LongOnly,
                        c.mode == Mode::Posix);
                    my_optind = state.optind;
                    my_optarg = state.optarg;
                    my_optopt = state.optopt;
                    return r;
                });
}

void compare(const Case& c) {
    if (c.posixly_correct)
        setenv("POSIXLY_CORRECT", "1", 1);
    else
        unsetenv("POSIXLY_CORRECT");
    std::vector<std::string> a, b;  // the same strings for both, in different arrays
    const Trace want = run_glibc(c, a);
    const Trace got = run_ours(c, b);
    unsetenv("POSIXLY_CORRECT");
    INFO(describe(c));
    REQUIRE(got.steps == want.steps);
    REQUIRE(got.final_argv == want.final_argv);
    REQUIRE(got.messages == want.messages);
}

}  // namespace

TEST_CASE("getopt_step: fixed command lines as glibc parses them", "[getopt]") {
    const std::vector<Case> cases = {
        {Mode::Getopt, "ab:c::", {"-a", "-bfoo", "-b", "bar", "-cx", "-c", "file"}},
        {Mode::Getopt, "ab:", {"x", "-a", "y", "-b", "1", "z", "--", "-a"}},  // permuted
        {Mode::Getopt, "ab:", {"x", "-a", "y"}, true},                        // POSIXLY_CORRECT
        {Mode::Posix, "ab:", {"-a", "x", "-b", "1"}},
        {Mode::Getopt, "+ab:", {"-a", "x", "-b", "1"}},
        {Mode::Getopt, "-ab:", {"x", "-a", "y", "-b1", "z"}},  // operands as option 1
        {Mode::Getopt, ":ab:", {"-z", "-b"}},                  // silent, ':' for a missing arg
        {Mode::Getopt, "ab:", {"-z", "-b"}},
        {Mode::Getopt, "ab:", {"-z", "-b"}, false, 0},  // opterr = 0
        {Mode::Getopt, "a:;", {"-:", "-;", "-a"}},
        {Mode::Long, "ab:", {"--alpha", "--alpine=3", "--alpine", "4", "--beta", "--beta=x"}},
        {Mode::Long, "ab:", {"--alp", "--al", "--verb", "--bet", "--be", "--size"}},
        {Mode::Long, "ab:", {"--alpha=1", "--nosuch", "--", "--alpha"}},
        {Mode::Long, ":ab:", {"--size", "--alp"}},
        {Mode::Long, "W;a", {"-W", "alpha", "-Wsize=2", "-W", "al", "-W"}},
        {Mode::LongOnly, "ab:s", {"-alpha", "-al", "-a", "-s", "-si", "-c", "-bx", "--c"}},
        {Mode::LongOnly, "ab:", {"-verb", "-alp", "-zz", "-alpine", "v"}},
        {Mode::Long, "ab:", {"x", "-ab", "y", "--size", "9", "z", "-a"}, false, 1, 1},
        {Mode::Long, "ab:", {"x", "-a", "y", "--", "-b"}, false, 1, 0},
    };
    for (const Case& c : cases) compare(c);
}

TEST_CASE("getopt_step: random command lines as glibc parses them", "[getopt]") {
    const std::vector<std::string> tokens = {
        "-a",       "-b",       "-c",       "-abc",    "-cfoo",     "-bx",   "-ba",    "-W",
        "-Walpha",  "-Wal",     "alpha",    "--alpha", "--al",      "--alp", "--alpi", "--alpine=3",
        "--alpine", "--beta",   "--beta=2", "--be",    "--bet",     "--ver", "--verb", "--verbo",
        "--size",   "--size=9", "--s",      "--x",     "--alpha=1", "-",     "--",     "file",
        "9",        "-alpha",   "-al",      "-s",      "-siz",      "-v",    "-:",     "-;",
        "-\xe9",    "--=",      "--c",      "-c=1",    "-Wsize=4",  "-Wc"};
    const std::vector<std::string> prefixes = {"", "", "", "+", "-", ":", "+:", "-:"};
    const std::string letters = "abcsW";
    const std::vector<std::string> suffixes = {"", "", ":", "::"};
    std::mt19937 rng(20261127);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    for (int i = 0; i < 4000; ++i) {
        Case c;
        c.mode = static_cast<Mode>(pick(4));
        c.optstring = prefixes[pick(prefixes.size())];
        for (char l : letters) {
            if (pick(3) == 0) continue;
            c.optstring += l;
            c.optstring += l == 'W' && pick(2) ? ";" : suffixes[pick(suffixes.size())];
        }
        const size_t n = pick(9);
        for (size_t k = 0; k < n; ++k) c.args.push_back(tokens[pick(tokens.size())]);
        c.posixly_correct = pick(6) == 0;
        c.opterr = pick(5) == 0 ? 0 : 1;
        // (optind past argc would make glibc read past argv)
        c.rescan_from = pick(4) == 0 ? static_cast<int>(std::min<size_t>(pick(3), n + 1)) : -1;
        compare(c);
    }
}

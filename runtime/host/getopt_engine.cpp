#include "getopt_engine.hpp"

#include <libintl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace mpc::host {
namespace {

using Order = GetoptState::Order;

// glibc's messages, translated as glibc translates them (its text domain).
const char* text(const char* message) {
    return dgettext("libc", message);
}

// "-" alone and anything not starting with '-' are operands.
bool is_operand(const char* arg) {
    return arg[0] != '-' || arg[1] == '\0';
}

// The options met since the skipped operands [first_nonopt, last_nonopt)
// (argv[last_nonopt, optind)) move in front of them, each group in its order.
void options_before_operands(char** argv, GetoptState& s) {
    std::rotate(argv + s.first_nonopt, argv + s.last_nonopt, argv + s.optind);
    s.first_nonopt += s.optind - s.last_nonopt;
    s.last_nonopt = s.optind;
}

const char* start_scan(GetoptState& s, const char* optstring, bool posixly_correct) {
    if (s.optind == 0) s.optind = 1;
    s.first_nonopt = s.last_nonopt = s.optind;
    s.nextchar = nullptr;
    if (optstring[0] == '-') {
        s.order = Order::ReturnInOrder;
        ++optstring;
    } else if (optstring[0] == '+') {
        s.order = Order::RequireOrder;
        ++optstring;
    } else {
        s.order =
            posixly_correct || getenv("POSIXLY_CORRECT") ? Order::RequireOrder : Order::Permute;
    }
    s.initialized = true;
    return optstring;
}

struct Scan {
    GetoptState& s;
    int argc;
    char** argv;
    const char* optstring;  // without its '+' or '-'
    const struct option* longopts;
    int* longindex;
    bool print_errors;

    int missing_argument_code() const { return optstring[0] == ':' ? ':' : '?'; }

    // s.nextchar holds "name" or "name=value" of argv[s.optind]. Returns what
    // the call returns, or -1 when (long_only) it should be read as short
    // options instead.
    int long_option(bool long_only, const char* prefix) {
        char* name = s.nextchar;
        char* end = name;
        while (*end && *end != '=') ++end;
        const size_t length = static_cast<size_t>(end - name);

        int count = 0;
        const struct option* found = nullptr;
        int found_index = -1;
        for (const struct option* o = longopts; o->name; ++o, ++count)
            if (!found && strlen(o->name) == length && strncmp(o->name, name, length) == 0) {
                found = o;
                found_index = count;
            }
        if (!found) {
            // An abbreviation: ambiguous when a second candidate would do
            // something else (always, for getopt_long_only).
            std::vector<int> listed;
            bool ambiguous = false;
            for (int i = 0; i < count; ++i) {
                const struct option* o = &longopts[i];
                if (strncmp(o->name, name, length) != 0) continue;
                if (!found) {
                    found = o;
                    found_index = i;
                    listed.push_back(i);
                } else if (long_only || o->has_arg != found->has_arg || o->flag != found->flag ||
                           o->val != found->val) {
                    ambiguous = true;
                    listed.push_back(i);
                }
            }
            if (ambiguous) {
                if (print_errors) {
                    flockfile(stderr);
                    fprintf(stderr, text("%s: option '%s%s' is ambiguous; possibilities:"), argv[0],
                            prefix, name);
                    for (int i : listed) fprintf(stderr, " '%s%s'", prefix, longopts[i].name);
                    fprintf(stderr, "\n");
                    funlockfile(stderr);
                }
                s.nextchar += strlen(s.nextchar);
                ++s.optind;
                s.optopt = 0;
                return '?';
            }
        }
        if (!found) {
            if (long_only && argv[s.optind][1] != '-' && strchr(optstring, *s.nextchar))
                return -1;  // "-xyz" of getopt_long_only: short options after all
            if (print_errors)
                fprintf(stderr, text("%s: unrecognized option '%s%s'\n"), argv[0], prefix, name);
            s.nextchar = nullptr;
            ++s.optind;
            s.optopt = 0;
            return '?';
        }

        ++s.optind;
        s.nextchar = nullptr;
        if (*end) {
            if (!found->has_arg) {
                if (print_errors)
                    fprintf(stderr, text("%s: option '%s%s' doesn't allow an argument\n"), argv[0],
                            prefix, found->name);
                s.optopt = found->val;
                return '?';
            }
            s.optarg = end + 1;
        } else if (found->has_arg == required_argument) {
            if (s.optind >= argc) {
                if (print_errors)
                    fprintf(stderr, text("%s: option '%s%s' requires an argument\n"), argv[0],
                            prefix, found->name);
                s.optopt = found->val;
                return missing_argument_code();
            }
            s.optarg = argv[s.optind++];
        }
        if (longindex) *longindex = found_index;
        if (found->flag) {
            *found->flag = found->val;
            return 0;
        }
        return found->val;
    }

    int missing_short_argument(char c) {
        if (print_errors)
            fprintf(stderr, text("%s: option requires an argument -- '%c'\n"), argv[0], c);
        s.optopt = c;
        return missing_argument_code();
    }

    // The next character of a cluster of short options.
    int short_option() {
        const char c = *s.nextchar++;
        const char* spec = strchr(optstring, c);
        if (*s.nextchar == '\0') ++s.optind;  // its last character: the element is done
        if (!spec || c == ':' || c == ';') {
            if (print_errors) fprintf(stderr, text("%s: invalid option -- '%c'\n"), argv[0], c);
            s.optopt = c;
            return '?';
        }
        if (spec[0] == 'W' && spec[1] == ';' && longopts) {  // "-W foo" is "--foo"
            char* name;
            if (*s.nextchar)
                name = s.nextchar;
            else if (s.optind == argc)
                return missing_short_argument(c);
            else
                name = argv[s.optind];
            s.nextchar = name;
            return long_option(false, "-W ");
        }
        if (spec[1] != ':') return c;
        if (spec[2] == ':') {  // optional argument: only glued to the option
            if (*s.nextchar) {
                s.optarg = s.nextchar;
                ++s.optind;
            }
        } else if (*s.nextchar) {
            s.optarg = s.nextchar;
            ++s.optind;
        } else if (s.optind == argc) {
            s.nextchar = nullptr;
            return missing_short_argument(c);
        } else {
            s.optarg = argv[s.optind++];
        }
        s.nextchar = nullptr;
        return c;
    }

    // At the start of an element: skips (and in Permute order sets aside)
    // operands, handles "--" and the end. Returns 0 when argv[s.optind] is
    // an option element to read, else what the call returns.
    int next_element(bool long_only, bool* done) {
        *done = true;
        // The caller may have moved optind back (to rescan, say).
        s.last_nonopt = std::min(s.last_nonopt, s.optind);
        s.first_nonopt = std::min(s.first_nonopt, s.optind);
        if (s.order == Order::Permute) {
            if (s.first_nonopt != s.last_nonopt && s.last_nonopt != s.optind)
                options_before_operands(argv, s);
            else if (s.last_nonopt != s.optind)
                s.first_nonopt = s.optind;
            while (s.optind < argc && is_operand(argv[s.optind])) ++s.optind;
            s.last_nonopt = s.optind;
        }
        if (s.optind != argc && strcmp(argv[s.optind], "--") == 0) {
            // Skipped like an option, then everything after it is an operand.
            ++s.optind;
            if (s.first_nonopt != s.last_nonopt && s.last_nonopt != s.optind)
                options_before_operands(argv, s);
            else if (s.first_nonopt == s.last_nonopt)
                s.first_nonopt = s.optind;
            s.last_nonopt = argc;
            s.optind = argc;
        }
        if (s.optind == argc) {
            if (s.first_nonopt != s.last_nonopt) s.optind = s.first_nonopt;
            return -1;
        }
        if (is_operand(argv[s.optind])) {
            if (s.order == Order::RequireOrder) return -1;
            s.optarg = argv[s.optind++];  // ReturnInOrder: an operand is "option 1"
            return 1;
        }
        if (longopts) {
            char* arg = argv[s.optind];
            if (arg[1] == '-') {
                s.nextchar = arg + 2;
                return long_option(long_only, "--");
            }
            // getopt_long_only: "-f" stays a short option when f is one;
            // "-fu" may abbreviate a long option.
            if (long_only && (arg[2] || !strchr(optstring, arg[1]))) {
                s.nextchar = arg + 1;
                const int code = long_option(true, "-");
                if (code != -1) return code;
            }
        }
        s.nextchar = argv[s.optind] + 1;
        *done = false;
        return 0;
    }
};

}  // namespace

int getopt_step(GetoptState& s, int argc, char** argv, const char* optstring,
                const struct option* longopts, int* longindex, bool long_only,
                bool posixly_correct) {
    bool print_errors = s.opterr != 0;
    if (argc < 1) return -1;
    s.optarg = nullptr;
    if (s.optind == 0 || !s.initialized)
        optstring = start_scan(s, optstring, posixly_correct);
    else if (optstring[0] == '-' || optstring[0] == '+')
        ++optstring;
    if (optstring[0] == ':') print_errors = false;

    Scan scan{s, argc, argv, optstring, longopts, longindex, print_errors};
    if (!s.nextchar || !*s.nextchar) {
        bool done = false;
        const int code = scan.next_element(long_only, &done);
        if (done) return code;
    }
    return scan.short_option();
}

}  // namespace mpc::host

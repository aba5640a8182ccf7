#include "options.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mpc::launcher {
namespace {

bool parse_int(const std::string& text, int min, int* out) {
    if (text.empty()) return false;
    char* end = nullptr;
    errno = 0;
    long v = strtol(text.c_str(), &end, 10);
    if (errno || *end || v < min || v > (1 << 22)) return false;
    *out = static_cast<int>(v);
    return true;
}

bool one_of(const std::string& v, std::initializer_list<const char*> words) {
    for (const char* w : words)
        if (v == w) return true;
    return false;
}

}  // namespace

const char* usage() {
    return "usage: mpcrun -n RANKS [-N NODES] [-c CORES] [--progress=wait|collaborative|thread]\n"
           "              [--net=auto|ofi|verbs] [--stats] [--timeout SECONDS] [-x VAR[=VALUE]]\n"
           "              program [args...]\n"
           "  -n, -np N, -n=N   number of MPI ranks (required, >= 1)\n"
           "  -N K              node processes to spread the ranks over (default 1)\n"
           "  -c K              cores (virtual processors) per node process\n"
           "  --progress=MODE   who progresses communication (default collaborative)\n"
           "  --net=NET         network driver between node processes (default auto)\n"
           "  --stats           print per-rank and per-function statistics at the end\n"
           "  --timeout S       end the job after S seconds\n"
           "  -x VAR[=VALUE]    pass an environment variable to the ranks\n"
           "  -h, --help        this text\n";
}

bool parse_options(int argc, const char* const* argv, Options* out, std::string* error) {
    Options o;
    int i = 1;
    // Value of an option given as "-o V", "-o=V" or "--opt=V".
    auto value = [&](const std::string& arg, const std::string& name, std::string* v) -> bool {
        if (arg == name) {
            if (i + 1 >= argc) {
                *error = "option " + name + " needs a value";
                return false;
            }
            *v = argv[++i];
            return true;
        }
        if (arg.rfind(name + "=", 0) == 0) {
            *v = arg.substr(name.size() + 1);
            return true;
        }
        return false;
    };
    for (; i < argc; ++i) {
        std::string arg = argv[i];
        std::string v;
        if (arg.empty() || arg[0] != '-') break;  // the program
        if (arg == "--") {
            ++i;
            break;
        }
        if (arg == "-h" || arg == "--help") {
            o.help = true;
            *out = o;
            return true;
        }
        if (arg == "--version") {
            o.version = true;
            *out = o;
            return true;
        }
        if (arg == "--stats") {
            o.stats = true;
            continue;
        }
        if (value(arg, "-n", &v) || value(arg, "-np", &v) || value(arg, "--np", &v)) {
            if (!parse_int(v, 1, &o.ranks)) {
                *error = "invalid number of ranks '" + v + "' (expected an integer >= 1)";
                return false;
            }
            continue;
        }
        if (!error->empty()) return false;
        if (value(arg, "-N", &v)) {
            if (!parse_int(v, 1, &o.nodes)) {
                *error = "invalid number of node processes '" + v + "' (expected >= 1)";
                return false;
            }
            continue;
        }
        if (!error->empty()) return false;
        if (value(arg, "-c", &v)) {
            if (!parse_int(v, 1, &o.cores)) {
                *error = "invalid number of cores '" + v + "' (expected >= 1)";
                return false;
            }
            continue;
        }
        if (!error->empty()) return false;
        if (value(arg, "--progress", &v)) {
            if (!one_of(v, {"wait", "collaborative", "thread"})) {
                *error = "invalid progress mode '" + v + "' (expected wait, collaborative or thread)";
                return false;
            }
            o.progress = v;
            continue;
        }
        if (!error->empty()) return false;
        if (value(arg, "--net", &v)) {
            if (!one_of(v, {"auto", "ofi", "verbs"})) {
                *error = "invalid network '" + v + "' (expected auto, ofi or verbs)";
                return false;
            }
            o.net = v;
            continue;
        }
        if (!error->empty()) return false;
        if (value(arg, "--timeout", &v)) {
            char* end = nullptr;
            double t = strtod(v.c_str(), &end);
            if (v.empty() || *end || t <= 0) {
                *error = "invalid timeout '" + v + "' (expected seconds > 0)";
                return false;
            }
            o.timeout = t;
            continue;
        }
        if (!error->empty()) return false;
        if (value(arg, "-x", &v)) {
            if (v.empty() || v[0] == '=') {
                *error = "invalid -x argument '" + v + "' (expected VAR or VAR=VALUE)";
                return false;
            }
            o.env.push_back(v);
            continue;
        }
        if (!error->empty()) return false;
        *error = "unknown option '" + arg + "'";
        return false;
    }
    for (; i < argc; ++i) o.program.push_back(argv[i]);
    if (o.program.empty()) {
        *error = "no program to run";
        return false;
    }
    if (o.ranks == 0) {
        *error = "the number of ranks is missing (-n N)";
        return false;
    }
    if (o.nodes > o.ranks) {
        *error = "more node processes (-N " + std::to_string(o.nodes) + ") than ranks (-n " +
                 std::to_string(o.ranks) + ")";
        return false;
    }
    *out = o;
    return true;
}

}  // namespace mpc::launcher

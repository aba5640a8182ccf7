// Parsing mpcrun's command line: see options.hpp.
#include "options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <initializer_list>

#include "mpcrun_usage.hpp"  // kUsageText, generated from launcher/doc/pages.py

namespace mpc::launcher {
namespace {

bool parse_count(const std::string& text, int* out) {
    if (text.empty() || text[0] == '-' || text[0] == '+' || text[0] == ' ') return false;
    char* end = nullptr;
    errno = 0;
    long v = strtol(text.c_str(), &end, 10);
    if (errno || *end || v < 1 || v > (1 << 22)) return false;
    *out = static_cast<int>(v);
    return true;
}

bool parse_seconds(const std::string& v, double* out) {
    char* end = nullptr;
    const double t = strtod(v.c_str(), &end);
    if (v.empty() || *end || !std::isfinite(t) || t <= 0) return false;
    *out = t;
    return true;
}

bool one_of(const std::string& v, std::initializer_list<const char*> words) {
    for (const char* w : words)
        if (v == w) return true;
    return false;
}

// "host" or "host:SLOTS" (Open MPI's --host, hydra's -hosts): the slot
// count says how many processes a host takes, which for node processes of
// threads means nothing; it is checked and dropped.
bool strip_slots(std::string* host) {
    const size_t colon = host->rfind(':');
    if (colon == std::string::npos || host->find(':') != colon) return true;  // none, or IPv6
    int slots = 0;
    if (!parse_count(host->substr(colon + 1), &slots)) return false;
    host->resize(colon);
    return !host->empty();
}

// The part of an Open MPI or hydra policy before its modifiers ("core:PE=2").
std::string policy_word(const std::string& v) {
    return v.substr(0, v.find(':'));
}

// An option: its spellings, how many values it takes ("-o V", "-o=V" for one;
// "-genv VAR VALUE" for two), and what it does; apply returns an error
// message, empty on success.
struct OptionSpec {
    const char* names[6];  // unused slots are null
    int values;
    std::string (*apply)(Options& o, const std::string& value, const std::string& second);
};

std::string ok() {
    return std::string();
}

const OptionSpec kOptions[] = {
    {{"-h", "--help", "-help"},
     0,
     [](Options& o, const std::string&, const std::string&) {
         o.help = true;
         return ok();
     }},
    {{"--version", "-version", "-V"},
     0,
     [](Options& o, const std::string&, const std::string&) {
         o.version = true;
         return ok();
     }},
    {{"--info"},
     0,
     [](Options& o, const std::string&, const std::string&) {
         o.info = true;
         return ok();
     }},
    {{"--stats"},
     0,
     [](Options& o, const std::string&, const std::string&) {
         o.stats = true;
         return ok();
     }},
    {{"--shared-globals"},
     0,
     [](Options& o, const std::string&, const std::string&) {
         o.shared_globals = true;
         return ok();
     }},
    {{"-n", "-np", "--np", "--n"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         return parse_count(v, &o.ranks)
                    ? ok()
                    : "invalid number of ranks '" + v + "' (expected an integer >= 1)";
     }},
    {{"-N"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         return parse_count(v, &o.nodes)
                    ? ok()
                    : "invalid number of nodes '" + v + "' (expected an integer >= 1)";
     }},
    {{"-p"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         return parse_count(v, &o.per_node) ? ok()
                                            : "invalid number of node processes per node '" + v +
                                                  "' (expected an integer >= 1)";
     }},
    {{"-ppn"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         return parse_count(v, &o.ranks_per_node)
                    ? ok()
                    : "invalid number of ranks per node '" + v + "' (expected an integer >= 1)";
     }},
    {{"--hosts", "-H", "--host", "-host", "-hosts"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         size_t pos = 0;
         while (pos <= v.size()) {
             size_t end = std::min(v.find(',', pos), v.size());
             std::string host = v.substr(pos, end - pos);
             if (host.empty() || host.find_first_of(" \t'\"") != std::string::npos ||
                 !strip_slots(&host))
                 return "invalid host list '" + v +
                        "' (expected names, or name:slots, separated by commas)";
             o.hosts.push_back(host);
             pos = end + 1;
         }
         return ok();
     }},
    {{"--hostfile", "--machinefile", "-hostfile", "-machinefile", "-f"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         if (v.empty()) return std::string("invalid host file '' (expected a file name)");
         o.hostfile = v;
         return ok();
     }},
    {{"--bind"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         if (!one_of(v, {"core", "none"}))
             return "invalid binding '" + v + "' (expected core or none)";
         o.bind = v;
         return ok();
     }},
    // Open MPI's and hydra's binding units: a core (or a hardware thread of
    // one) is ours; a wider unit leaves the virtual processors unbound.
    {{"--bind-to", "-bind-to"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         const std::string unit = policy_word(v);
         if (one_of(unit, {"core", "hwthread", "cpu"}))
             o.bind = "core";
         else if (one_of(unit, {"none", "socket", "numa", "package", "board", "l1cache", "l2cache",
                                "l3cache"}))
             o.bind = "none";
         else
             return "invalid binding '" + v +
                    "' (expected none, core, hwthread, socket, numa, package or l3cache)";
         return ok();
     }},
    {{"--map"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         if (!one_of(v, {"block", "cyclic"}))
             return "invalid rank mapping '" + v + "' (expected block or cyclic)";
         o.map = v;
         return ok();
     }},
    // Open MPI's mapping policies: consecutive ranks fill a node first
    // (slot, core, ...: our block) or go round the nodes (node: cyclic).
    {{"--map-by", "-map-by"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         const std::string policy = policy_word(v);
         if (policy == "node")
             o.map = "cyclic";
         else if (one_of(policy, {"slot", "core", "hwthread", "socket", "numa", "package", "board",
                                  "l1cache", "l2cache", "l3cache"}))
             o.map = "block";
         else
             return "invalid mapping policy '" + v + "' (expected slot, core, socket or node)";
         return ok();
     }},
    {{"-c"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         return parse_count(v, &o.cores)
                    ? ok()
                    : "invalid number of cores '" + v + "' (expected an integer >= 1)";
     }},
    {{"--progress"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         // thread-poll and thread-block name the progress thread's way of
         // waiting too, so a benchmark matrix is one option per run.
         if (one_of(v, {"thread-poll", "thread-block"})) {
             o.progress = "thread";
             o.progress_thread = v.substr(7);
             return ok();
         }
         if (!one_of(v, {"wait", "collaborative", "thread"}))
             return "invalid progress mode '" + v +
                    "' (expected wait, collaborative, thread, thread-poll or thread-block)";
         o.progress = v;
         o.progress_thread.clear();
         return ok();
     }},
    {{"--net"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         if (!one_of(v, {"auto", "tcp", "ofi", "verbs"}))
             return "invalid network '" + v + "' (expected auto, tcp, ofi or verbs)";
         o.net = v;
         return ok();
     }},
    {{"--timeout", "-timeout"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         return parse_seconds(v, &o.timeout) ? ok()
                                             : "invalid timeout '" + v + "' (expected seconds > 0)";
     }},
    // MPI 4.1's key of mpiexec (its initial error handler, section 9.3): the
    // error handler of MPI_COMM_WORLD and MPI_COMM_SELF when they start, and
    // of errors raised outside any rank.
    {{"--initial-errhandler", "-initial-errhandler"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         if (!one_of(v, {"mpi_errors_are_fatal", "mpi_errors_abort", "mpi_errors_return"}))
             return "invalid initial error handler '" + v +
                    "' (expected mpi_errors_are_fatal, mpi_errors_abort or mpi_errors_return)";
         o.initial_errhandler = v;
         return ok();
     }},
    // MPI 4.1's memory allocation kinds (section 12.4.3) the program asks for,
    // a comma-separated list: the ranks answer which they support.
    {{"--memory-alloc-kinds", "-memory-alloc-kinds"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         o.memory_alloc_kinds = v;
         return ok();
     }},
    {{"-x"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         if (v.empty() || v[0] == '=')
             return "invalid -x argument '" + v + "' (expected VAR or VAR=VALUE)";
         o.env.push_back(v);
         return ok();
     }},
    {{"-genv", "-env"},
     2,
     [](Options& o, const std::string& name, const std::string& value) {
         if (name.empty() || name.find('=') != std::string::npos)
             return "invalid variable name '" + name + "' for -genv (expected -genv VAR VALUE)";
         o.env.push_back(name + "=" + value);
         return ok();
     }},
    {{"-genvall"},
     0,
     [](Options& o, const std::string&, const std::string&) {
         o.env_all = true;
         return ok();
     }},
    // Open MPI refuses more processes than slots without it; threads have no
    // such limit, so there is nothing to allow.
    {{"--oversubscribe", "-oversubscribe"},
     0,
     [](Options&, const std::string&, const std::string&) { return ok(); }},
    {{"--tag-output", "-tag-output"},
     0,
     [](Options& o, const std::string&, const std::string&) {
         o.label = OutputLabel::kTag;
         return ok();
     }},
    {{"-prepend-rank", "-l"},
     0,
     [](Options& o, const std::string&, const std::string&) {
         o.label = OutputLabel::kRank;
         return ok();
     }},
    {{"--output-filename", "-output-filename"},
     1,
     [](Options& o, const std::string& v, const std::string&) {
         if (v.empty()) return std::string("invalid output directory '' (expected a path)");
         o.output_dir = v;
         return ok();
     }},
};

}  // namespace

const char* usage() {
    return kUsageText;
}

bool parse_options(int argc, const char* const* argv, Options* out, std::string* error) {
    Options o;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.empty() || arg[0] != '-') break;  // the program
        if (arg == "--") {
            ++i;
            break;
        }
        const OptionSpec* spec = nullptr;
        std::string name, value, second;
        bool inline_value = false;
        for (const OptionSpec& s : kOptions) {
            for (const char* n : s.names) {
                if (!n) break;
                const std::string candidate = n;
                if (arg == candidate || arg.rfind(candidate + "=", 0) == 0) {
                    spec = &s;
                    name = candidate;
                    inline_value = arg.size() > candidate.size();
                    if (inline_value) value = arg.substr(candidate.size() + 1);
                }
            }
        }
        if (!spec) {
            *error = "unknown option '" + arg + "'";
            return false;
        }
        if (spec->values != 1 && inline_value) {
            *error = spec->values == 0
                         ? "option " + name + " takes no value"
                         : "option " + name + " takes two values: " + name + " VAR VALUE";
            return false;
        }
        if (spec->values >= 1 && !inline_value) {
            if (i + spec->values >= argc) {
                *error =
                    "option " + name + (spec->values == 1 ? " needs a value" : " needs two values");
                return false;
            }
            value = argv[++i];
            if (spec->values == 2) second = argv[++i];
        }
        std::string problem = spec->apply(o, value, second);
        if (!problem.empty()) {
            *error = problem;
            return false;
        }
        if (o.help || o.version || o.info) {
            *out = o;
            return true;
        }
    }
    for (; i < argc; ++i) o.program.push_back(argv[i]);
    if (o.program.empty()) {
        *error = "no program to run";
        return false;
    }
    if (o.ranks == 0 && o.ranks_per_node == 0) {
        *error = "the number of ranks is missing (-n N)";
        return false;
    }
    if (!o.hosts.empty() && !o.hostfile.empty()) {
        *error = "--hosts and --hostfile exclude each other";
        return false;
    }
    // With hosts or Slurm the node count is known later (JobPlan checks again).
    const long node_procs = static_cast<long>(std::max(o.nodes, 1)) * o.per_node;
    if (o.ranks > 0 && node_procs > o.ranks) {
        *error = "more node processes (" +
                 (o.per_node > 1 ? std::to_string(std::max(o.nodes, 1)) + " nodes x -p " +
                                       std::to_string(o.per_node)
                                 : "-N " + std::to_string(std::max(o.nodes, 1))) +
                 ") than ranks (-n " + std::to_string(o.ranks) + ")";
        return false;
    }
    if (!o.output_dir.empty() && o.label != OutputLabel::kNone) {
        *error = "--output-filename excludes --tag-output and -prepend-rank";
        return false;
    }
    *out = o;
    return true;
}

bool apply_environment(const std::function<const char*(const char*)>& env, Options* o,
                       std::string* error) {
    const char* t = env("MPIEXEC_TIMEOUT");
    if (o->timeout > 0 || !t || !*t) return true;  // an option wins over the variable
    if (!parse_seconds(t, &o->timeout)) {
        *error = std::string("MPIEXEC_TIMEOUT=") + t + " is not valid (expected seconds > 0)";
        return false;
    }
    return true;
}

}  // namespace mpc::launcher

// Commands for ssh and srun: see remote_launch.hpp.
#include "remote_launch.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "runtime/auth.hpp"

namespace mpc::launcher {

EnvVars job_variables(const Options& o, const JobPlan& plan) {
    EnvVars vars = {{"MPC_NRANKS", std::to_string(plan.ranks)},
                    {"MPC_NUM_NODES", std::to_string(plan.node_procs)},
                    {"MPC_MAP", plan.map}};
    if (o.cores > 0) vars.emplace_back("MPC_VPS", std::to_string(o.cores));
    if (!o.bind.empty()) vars.emplace_back("MPC_BIND", o.bind == "core" ? "1" : "0");
    if (!o.progress.empty()) vars.emplace_back("MPC_PROGRESS", o.progress);
    if (!o.progress_thread.empty()) vars.emplace_back("MPC_PROGRESS_THREAD", o.progress_thread);
    if (!o.net.empty()) vars.emplace_back("MPC_NET", o.net);
    if (o.stats) vars.emplace_back("MPC_STATS", "1");
    if (o.memory_alloc_kinds) vars.emplace_back("MPC_MEMORY_ALLOC_KINDS", *o.memory_alloc_kinds);
    if (!o.initial_errhandler.empty())
        vars.emplace_back("MPC_INITIAL_ERRHANDLER", o.initial_errhandler);
    if (o.shared_globals) vars.emplace_back("MPC_SHARED_GLOBALS", "1");
    // Output marked by rank, or a file per rank: the node processes do it,
    // since only they know which rank writes (runtime/host/rank_output.cpp).
    if (o.label != OutputLabel::kNone)
        vars.emplace_back("MPC_OUTPUT_LABEL", o.label == OutputLabel::kTag ? "tag" : "rank");
    if (!o.output_dir.empty()) {
        char cwd[4096];
        const bool relative = o.output_dir[0] != '/' && getcwd(cwd, sizeof cwd);
        vars.emplace_back("MPC_OUTPUT_DIR",
                          relative ? std::string(cwd) + "/" + o.output_dir : o.output_dir);
    }
    // Arms each node process's hang watchdog: when the time limit ends the
    // job, node processes print what every rank waits for before dying.
    if (o.timeout > 0 && !getenv("MPC_HANG_TIMEOUT")) {
        char seconds[32];
        snprintf(seconds, sizeof(seconds), "%g", o.timeout);
        vars.emplace_back("MPC_HANG_TIMEOUT", seconds);
    }
    for (const std::string& kv : o.env) {  // "-x VAR" alone: inherited as it is
        size_t eq = kv.find('=');
        if (eq != std::string::npos) vars.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    return vars;
}

EnvVars forwarded_variables(const Options& o, const char* const* environ_entries) {
    EnvVars vars;
    for (const char* const* e = environ_entries; *e; ++e) {
        const std::string entry = *e;
        const size_t eq = entry.find('=');
        if (eq == std::string::npos) continue;
        const std::string name = entry.substr(0, eq);
        bool named = name.rfind("MPC_", 0) == 0;
        for (const std::string& kv : o.env) named = named || kv == name;
        if (named && name != runtime::auth::kSecretVariable)
            vars.emplace_back(name, entry.substr(eq + 1));
    }
    return vars;
}

EnvVars all_variables(const char* const* environ_entries) {
    EnvVars vars;
    for (const char* const* e = environ_entries; *e; ++e) {
        const std::string entry = *e;
        const size_t eq = entry.find('=');
        if (eq == std::string::npos || eq == 0) continue;
        const std::string name = entry.substr(0, eq);
        if (name == runtime::auth::kSecretVariable || name.rfind("PMI_", 0) == 0) continue;
        vars.emplace_back(name, entry.substr(eq + 1));
    }
    return vars;
}

std::string shell_quote(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'')
            out += "'\\''";  // close, an escaped quote, reopen
        else
            out += c;
    }
    return out + "'";
}

std::vector<std::string> split_words(const std::string& text) {
    std::vector<std::string> words;
    std::string word;
    for (char c : text) {
        if (c == ' ' || c == '\t' || c == '\n') {
            if (!word.empty()) words.push_back(word);
            word.clear();
        } else {
            word += c;
        }
    }
    if (!word.empty()) words.push_back(word);
    return words;
}

std::vector<std::string> ssh_command(const std::string& ssh, const std::string& host,
                                     const std::string& directory, const EnvVars& vars,
                                     const std::vector<std::string>& program,
                                     const std::string& secret_variable) {
    std::vector<std::string> command = split_words(ssh);
    if (command.empty()) command.push_back("ssh");
    command.push_back(host);
    // ssh joins its arguments with spaces for the remote shell: one string,
    // quoted here, survives that whatever the values hold. The script runs in
    // sh, whatever the login shell, for its `read`.
    // Without the secret line (ssh -n in MPC_SSH, say) it says so and stops.
    std::string script = "cd " + shell_quote(directory) + " && { IFS= read -r " + secret_variable +
                         " || { echo \"fibermpi: no job secret on standard input (ssh -n in "
                         "MPC_SSH?)\" >&2; exit 255; }; } && export " +
                         secret_variable + " && exec env";
    for (const auto& [name, value] : vars)
        script.append(" ").append(shell_quote(name + "=" + value));
    for (const std::string& word : program) script.append(" ").append(shell_quote(word));
    command.push_back("exec sh -c " + shell_quote(script));
    return command;
}

std::vector<std::string> srun_command(const std::string& srun, const JobPlan& plan,
                                      const std::vector<std::string>& program) {
    std::vector<std::string> command = split_words(srun);
    if (command.empty()) command.push_back("srun");
    for (std::string option : {
             "--nodes=" + std::to_string(plan.nodes),
             "--ntasks=" + std::to_string(plan.node_procs),
             "--ntasks-per-node=" + std::to_string(plan.per_node),
             // mpcrun is the PMI server: Slurm's own PMI must stay out.
             std::string("--mpi=none"),
             // A failing node process ends the others, as mpcrun does locally.
             std::string("--kill-on-bad-exit=1"),
             // mpcrun's stdin goes to node process 0 only.
             std::string("--input=0"),
             // Node processes sharing a node split its cores themselves (the
             // runtime's placement); Slurm's binding would cut them twice.
             std::string("--cpu-bind=none"),
             // Several node processes per node may outnumber its CPUs.
             std::string("--overcommit"),
         })
        command.push_back(option);
    command.insert(command.end(), program.begin(), program.end());
    return command;
}

}  // namespace mpc::launcher

// Starting a node process: see node_launch.hpp.
#include "node_launch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace mpc::launcher {
namespace {

std::vector<std::string> build_environment(
    const std::vector<std::pair<std::string, std::string>>& vars) {
    std::vector<std::string> env;
    auto set = [&](const std::string& name, const std::string& entry) {
        for (std::string& e : env)
            if (e.compare(0, name.size() + 1, name + "=") == 0) {
                e = entry;
                return;
            }
        env.push_back(entry);
    };
    for (char** e = environ; *e; ++e) {
        std::string entry = *e;
        set(entry.substr(0, entry.find('=')), entry);
    }
    for (const auto& [name, value] : vars) set(name, name + "=" + value);
    return env;
}

void close_pair(int fds[2]) {
    for (int i = 0; i < 2; ++i)
        if (fds[i] >= 0) close(fds[i]);
}

}  // namespace

LaunchResult launch_node(const std::vector<std::string>& program,
                         const std::vector<std::pair<std::string, std::string>>& vars, int keep_fd,
                         bool with_stdin, std::string* error) {
    LaunchResult r;
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    bool ok = pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0;
    if (ok && with_stdin) ok = pipe2(in, O_CLOEXEC) == 0;
    if (ok && !with_stdin) ok = (in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;
    if (!ok) {
        *error = std::string("cannot create pipes: ") + strerror(errno);
        close_pair(in), close_pair(out), close_pair(err);
        return r;
    }
    // Everything the child needs is built before fork.
    std::vector<std::string> env = build_environment(vars);
    std::vector<char*> envp, argv;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    for (const std::string& a : program) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    // Signals stay blocked until the child has reset mpcrun's handlers.
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
        // mpcrun's handlers go; what the user's shell ignored (nohup) stays ignored.
        for (int sig = 1; sig < NSIG; ++sig) {
            struct sigaction cur {};
            if (sigaction(sig, nullptr, &cur) == 0 && cur.sa_handler != SIG_IGN)
                signal(sig, SIG_DFL);
        }
        signal(SIGPIPE, SIG_DFL);  // ignored by mpcrun itself
        signal(SIGTTIN, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);  // mpcrun died before prctl
        dup2(in[0], STDIN_FILENO);            // dup2 clears close-on-exec on the copies
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        if (keep_fd >= 0) fcntl(keep_fd, F_SETFD, 0);
        execvpe(argv[0], argv.data(), envp.data());
        dprintf(STDERR_FILENO, "mpcrun: cannot execute '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0) {
        *error = std::string("fork failed: ") + strerror(fork_errno);
        close_pair(in), close_pair(out), close_pair(err);
        return r;
    }
    setpgid(pid, pid);  // as the child does: no window where signals miss the group
    close(in[0]);
    close(out[1]);
    close(err[1]);
    r.pid = pid;
    r.stdin_fd = in[1];
    r.stdout_fd = out[0];
    r.stderr_fd = err[0];
    for (int fd : {r.stdin_fd, r.stdout_fd, r.stderr_fd})
        if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return r;
}

}  // namespace mpc::launcher

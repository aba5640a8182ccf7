// Job control of mpcrun: see job.hpp.
#include "job.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "line_buffer.hpp"
#include "node_launch.hpp"
#include "pmi2_server.hpp"

namespace mpc::launcher {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kKillGrace = std::chrono::seconds(1);   // SIGTERM, then SIGKILL
constexpr auto kDrainGrace = std::chrono::seconds(1);  // output left after the last exit
constexpr size_t kStdinBuffer = 64 * 1024;

int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
    int saved = errno;
    unsigned char byte = static_cast<unsigned char>(sig);
    ssize_t ignored = write(g_signal_pipe[1], &byte, 1);
    (void)ignored;
    errno = saved;
}

struct OutputStream {
    int fd = -1;      // read end of the node process's pipe
    int target = -1;  // mpcrun's stdout or stderr
    LineBuffer lines;
};

struct NodeProcess {
    pid_t pid = -1;
    int first_rank = 0, last_rank = 0;
    OutputStream out, err;
    bool exited = false;
};

class Job {
  public:
    explicit Job(const Options& o)
        : o_(o), pmi_(o.nodes, "mpcrun-" + std::to_string(getpid())), nodes_(o.nodes) {}
    ~Job() {
        if (stdin_pipe_ >= 0) close(stdin_pipe_);
    }
    int run();

  private:
    enum class Watch { kPmi, kOut, kErr, kStdin, kStdinPipe, kSignal };

    bool start(int node);
    void loop();
    void on_signals();
    void reap();
    void read_output(OutputStream& s);
    void read_stdin();
    void write_stdin();
    void handle_pmi_events();
    void end_job(int status, const std::string& message, int sig = SIGTERM);
    void signal_all(int sig);
    std::string describe(int node) const;
    void write_out(int target, const std::string& text);
    bool done() const;

    const Options& o_;
    Pmi2Server pmi_;
    std::vector<NodeProcess> nodes_;
    int alive_ = 0;
    bool ending_ = false;
    int exit_status_ = 0;
    Clock::time_point kill_at_ = Clock::time_point::max();
    Clock::time_point timeout_at_ = Clock::time_point::max();
    Clock::time_point drain_until_ = Clock::time_point::max();
    bool stdin_open_ = true;  // mpcrun's stdin still to be read
    int stdin_pipe_ = -1;     // write end of node process 0's stdin
    std::string stdin_buf_;
    bool target_broken_[3] = {false, false, false};
};

int Job::run() {
    if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf(stderr, "mpcrun: pipe failed: %s\n", strerror(errno));
        return 1;
    }
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
        struct sigaction old {};
        sigaction(sig, nullptr, &old);
        if (old.sa_handler == SIG_IGN && sig != SIGCHLD) continue;  // nohup mpcrun ...
        sigaction(sig, &sa, nullptr);
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTTIN, SIG_IGN);  // a background mpcrun reading the terminal gets EIO, not stopped

    for (int n = 0; n < o_.nodes && !ending_; ++n)
        if (!start(n)) end_job(1, "");
    if (o_.timeout > 0)
        timeout_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(o_.timeout));
    loop();
    return exit_status_;
}

bool Job::start(int n) {
    NodeProcess& np = nodes_[static_cast<size_t>(n)];
    np.first_rank = static_cast<int>(static_cast<long>(o_.ranks) * n / o_.nodes);
    np.last_rank = static_cast<int>(static_cast<long>(o_.ranks) * (n + 1) / o_.nodes) - 1;
    std::string error;
    LaunchResult r;
    int pmi_fd = pmi_.open_channel(n, &error);
    if (pmi_fd >= 0) {
        std::vector<std::pair<std::string, std::string>> vars = {
            {"MPC_NRANKS", std::to_string(o_.ranks)},
            {"MPC_NODE_ID", std::to_string(n)},
            {"MPC_NUM_NODES", std::to_string(o_.nodes)}};
        if (o_.cores > 0) vars.emplace_back("MPC_VPS", std::to_string(o_.cores));
        if (!o_.progress.empty()) vars.emplace_back("MPC_PROGRESS", o_.progress);
        if (!o_.progress_thread.empty())
            vars.emplace_back("MPC_PROGRESS_THREAD", o_.progress_thread);
        if (!o_.net.empty()) vars.emplace_back("MPC_NET", o_.net);
        if (o_.stats) vars.emplace_back("MPC_STATS", "1");
        if (o_.shared_globals) vars.emplace_back("MPC_SHARED_GLOBALS", "1");
        // Arms each node process's hang watchdog: when the time limit ends the
        // job, node processes print what every rank waits for before dying.
        if (o_.timeout > 0 && !getenv("MPC_HANG_TIMEOUT")) {
            char seconds[32];
            snprintf(seconds, sizeof(seconds), "%g", o_.timeout);
            vars.emplace_back("MPC_HANG_TIMEOUT", seconds);
        }
        for (const std::string& kv : o_.env) {  // "-x VAR" alone: inherited as it is
            size_t eq = kv.find('=');
            if (eq != std::string::npos) vars.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
        }
        for (auto& kv : pmi_.child_environment(n, pmi_fd)) vars.push_back(kv);  // these win
        r = launch_node(o_.program, vars, pmi_fd, n == 0, &error);
        pmi_.close_child_end(n);
    }
    if (r.pid < 0) {
        write_out(STDERR_FILENO,
                  "mpcrun: cannot start node process " + std::to_string(n) + ": " + error + "\n");
        return false;
    }
    np.pid = r.pid;
    np.out.fd = r.stdout_fd;
    np.out.target = STDOUT_FILENO;
    np.err.fd = r.stderr_fd;
    np.err.target = STDERR_FILENO;
    if (n == 0) stdin_pipe_ = r.stdin_fd;
    ++alive_;
    return true;
}

void Job::loop() {
    std::vector<pollfd> fds;
    std::vector<std::pair<Watch, int>> what;
    while (!done()) {
        fds.clear();
        what.clear();
        auto watch = [&](int fd, short events, Watch w, int node) {
            fds.push_back({fd, events, 0});
            what.emplace_back(w, node);
        };
        // PMI before the signal pipe: an abort sent just before dying must be
        // known before the death is.
        for (int n = 0; n < o_.nodes; ++n) {
            NodeProcess& np = nodes_[static_cast<size_t>(n)];
            if (pmi_.fd(n) >= 0) watch(pmi_.fd(n), pmi_.poll_events(n), Watch::kPmi, n);
            if (np.out.fd >= 0) watch(np.out.fd, POLLIN, Watch::kOut, n);
            if (np.err.fd >= 0) watch(np.err.fd, POLLIN, Watch::kErr, n);
        }
        if (stdin_open_ && stdin_pipe_ >= 0 && stdin_buf_.size() < kStdinBuffer)
            watch(STDIN_FILENO, POLLIN, Watch::kStdin, 0);
        if (stdin_pipe_ >= 0 && !stdin_buf_.empty())
            watch(stdin_pipe_, POLLOUT, Watch::kStdinPipe, 0);
        watch(g_signal_pipe[0], POLLIN, Watch::kSignal, 0);

        auto next =
            std::min({kill_at_, ending_ ? Clock::time_point::max() : timeout_at_, drain_until_});
        int timeout_ms = -1;
        if (next != Clock::time_point::max()) {
            auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();
            timeout_ms = static_cast<int>(std::clamp<long long>(ms, 0, INT_MAX));
        }
        int ready = poll(fds.data(), fds.size(), timeout_ms);
        if (ready < 0 && errno != EINTR) {
            fprintf(stderr, "mpcrun: poll failed: %s\n", strerror(errno));
            end_job(1, "");
            signal_all(SIGKILL);
            return;
        }
        for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
            if (!fds[i].revents) continue;
            NodeProcess& np = nodes_[static_cast<size_t>(what[i].second)];
            switch (what[i].first) {
                case Watch::kPmi:
                    pmi_.handle(what[i].second, fds[i].revents);
                    break;
                case Watch::kOut:
                    read_output(np.out);
                    break;
                case Watch::kErr:
                    read_output(np.err);
                    break;
                case Watch::kStdin:
                    read_stdin();
                    break;
                case Watch::kStdinPipe:
                    write_stdin();
                    break;
                case Watch::kSignal:
                    on_signals();
                    break;
            }
        }
        handle_pmi_events();

        auto now = Clock::now();
        if (!ending_ && now >= timeout_at_) {
            char text[128];
            snprintf(text, sizeof(text),
                     "mpcrun: the job exceeded its time limit of %g s; ending it", o_.timeout);
            end_job(124, text);
        }
        if (now >= kill_at_) {
            signal_all(SIGKILL);
            kill_at_ = Clock::time_point::max();
        }
        if (now >= drain_until_) {  // something kept a pipe open after the last exit
            for (NodeProcess& np : nodes_)
                for (OutputStream* s : {&np.out, &np.err})
                    if (s->fd >= 0) {
                        write_out(s->target, s->lines.finish());
                        close(s->fd);
                        s->fd = -1;
                    }
        }
    }
}

bool Job::done() const {
    if (alive_ > 0) return false;
    for (const NodeProcess& np : nodes_)
        if (np.out.fd >= 0 || np.err.fd >= 0) return false;
    return true;
}

void Job::on_signals() {
    unsigned char sigs[64];
    ssize_t n;
    while ((n = read(g_signal_pipe[0], sigs, sizeof(sigs))) > 0) {
        for (ssize_t i = 0; i < n; ++i) {
            int sig = sigs[i];
            if (sig == SIGCHLD) continue;
            if (ending_) {  // asked twice: no more grace
                signal_all(SIGKILL);
                continue;
            }
            char text[128];
            snprintf(text, sizeof(text), "mpcrun: received signal %d (%s); ending the job", sig,
                     strsignal(sig));
            end_job(128 + sig, text, sig == SIGINT ? SIGINT : SIGTERM);
        }
    }
    reap();
}

void Job::reap() {
    for (;;) {
        siginfo_t info{};
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
        const pid_t pid = info.si_pid;
        // Still a zombie, it keeps its process group id from being reused:
        // end whatever it left running in its group.
        kill(-pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        auto it = std::find_if(nodes_.begin(), nodes_.end(),
                               [&](const NodeProcess& np) { return np.pid == pid && !np.exited; });
        if (it == nodes_.end()) continue;
        const int n = static_cast<int>(it - nodes_.begin());
        it->exited = true;
        --alive_;
        if (n == 0 && stdin_pipe_ >= 0) {
            close(stdin_pipe_);
            stdin_pipe_ = -1;
            stdin_buf_.clear();
        }
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pmi_.client_exited(n, ending_ || code != 0);
        handle_pmi_events();  // an abort it sent before dying explains the death
        if (code != 0 && !ending_) {
            char text[160];
            if (WIFSIGNALED(status))
                snprintf(text, sizeof(text), " was killed by signal %d (%s); ending the job",
                         WTERMSIG(status), strsignal(WTERMSIG(status)));
            else
                snprintf(text, sizeof(text), " exited with status %d; ending the job", code);
            end_job(code, "mpcrun: " + describe(n) + text);
        }
        if (alive_ == 0) drain_until_ = Clock::now() + kDrainGrace;
    }
}

void Job::handle_pmi_events() {
    for (const Pmi2Server::Event& e : pmi_.take_events()) {
        if (ending_) continue;
        if (e.kind == Pmi2Server::Event::Kind::kAbort) {
            int status = e.status & 0xff;
            end_job(status ? status : 1, "mpcrun: " + describe(e.client) +
                                             " aborted the job (status " +
                                             std::to_string(e.status) + "): " + e.message);
        } else {
            end_job(1, "mpcrun: " + describe(e.client) + ": " + e.message + "; ending the job");
        }
    }
}

void Job::end_job(int status, const std::string& message, int sig) {
    if (ending_) return;
    ending_ = true;
    exit_status_ = status;
    if (!message.empty()) write_out(STDERR_FILENO, message + "\n");
    signal_all(sig);
    kill_at_ = Clock::now() + kKillGrace;
}

void Job::signal_all(int sig) {
    for (const NodeProcess& np : nodes_)
        if (np.pid > 0 && !np.exited) kill(-np.pid, sig);
}

std::string Job::describe(int n) const {
    const NodeProcess& np = nodes_[static_cast<size_t>(n)];
    std::string ranks = np.first_rank == np.last_rank ? "rank " + std::to_string(np.first_rank)
                                                      : "ranks " + std::to_string(np.first_rank) +
                                                            "-" + std::to_string(np.last_rank);
    return "node process " + std::to_string(n) + " (" + ranks + ", pid " + std::to_string(np.pid) +
           ")";
}

void Job::read_output(OutputStream& s) {
    char buf[65536];
    ssize_t n = read(s.fd, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n > 0) {
        write_out(s.target, s.lines.feed(buf, static_cast<size_t>(n)));
        return;
    }
    write_out(s.target, s.lines.finish());  // end of stream
    close(s.fd);
    s.fd = -1;
}

void Job::read_stdin() {
    char buf[16384];
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
    if (n > 0) {
        stdin_buf_.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        stdin_open_ = false;  // end of input, or a terminal we may not read
    }
    if (!stdin_open_ && stdin_buf_.empty() && stdin_pipe_ >= 0) {
        close(stdin_pipe_);
        stdin_pipe_ = -1;
    }
}

void Job::write_stdin() {
    ssize_t n = write(stdin_pipe_, stdin_buf_.data(), stdin_buf_.size());
    if (n > 0) {
        stdin_buf_.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno != EINTR && errno != EAGAIN) {  // node process 0 closed its stdin
        stdin_buf_.clear();
        stdin_open_ = false;
    }
    if (!stdin_open_ && stdin_buf_.empty()) {
        close(stdin_pipe_);
        stdin_pipe_ = -1;
    }
}

// Whole lines in one write each batch; a closed target drops the output.
void Job::write_out(int target, const std::string& text) {
    size_t done = 0;
    while (done < text.size() && !target_broken_[target]) {
        ssize_t n = write(target, text.data() + done, text.size() - done);
        if (n > 0) {
            done += static_cast<size_t>(n);
        } else if (n < 0 && errno == EAGAIN) {
            pollfd p{target, POLLOUT, 0};
            poll(&p, 1, 100);
        } else if (n < 0 && errno != EINTR) {
            target_broken_[target] = true;
        }
    }
}

}  // namespace

int run_job(const Options& options) {
    // Standard descriptors closed at start would be reused by our pipes.
    for (int fd = 0; fd <= 2; ++fd)
        if (fcntl(fd, F_GETFD) < 0) open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    Job job(options);
    return job.run();
}

}  // namespace mpc::launcher

"""The one source of mpcrun's and the compiler wrappers' documentation.

gen_doc.py turns each page into a man page (installed under share/man/man1)
and into the text --help prints (mpcrun's kUsageText, the wrappers' help).
A page: name, aliases (other names of the same program), summary, synopsis
lines, description paragraphs, option groups (spellings, then the text), and
further sections (title, paragraphs). Text is plain: no markup; a paragraph
starting with two spaces is kept as a literal block.
"""

MPCRUN = {
    "name": "mpcrun",
    "aliases": ["mpiexec", "mpirun"],
    "summary": "run an MPI program with fibermpi, a thread-based MPI",
    "synopsis": [
        "mpcrun -n RANKS [options] program [args...]",
        "mpiexec, mpirun: the same program, with the same options",
    ],
    "description": [
        "mpcrun starts the node processes of an MPI job and watches them until the end. "
        "Every rank of a node process is a user-level thread (a fiber) of that process; "
        "by default the job is one node process on this host, -N and -p ask for more, "
        "--hosts and --hostfile start them on other hosts through ssh, and inside a Slurm "
        "allocation srun starts them. mpcrun is their PMI-2 server, forwards their output "
        "line by line and ends the whole job when one node process fails.",
        "mpiexec and mpirun are mpcrun under other names. They also accept the spellings "
        "of Open MPI's mpirun and MPICH's hydra that scripts use most, each mapped onto "
        "what it means here (below).",
    ],
    "options": [
        ("Ranks and nodes", [
            (["-n N", "-np N", "--np N", "--n N", "-n=N"],
             "Number of MPI ranks (required, unless -ppn gives it)."),
            (["-N K"],
             "Nodes: 1 on this host alone by default; every host of --hosts or --hostfile, "
             "or every node of the Slurm allocation; -N K takes the first K. On this host "
             "alone each node is -p node processes of this host. (Open MPI's -N, processes "
             "per node, is -ppn here.)"),
            (["-p K"], "Node processes per node (default 1): -N 2 -p 2 is 4 node processes."),
            (["-ppn P"],
             "Ranks per node (hydra): with hosts, the job takes ceil(N/P) of them (all at "
             "most); without -n, N is P times the nodes."),
            (["-c K"],
             "Virtual processors (cores) per node process; default one per core of its "
             "share of the host, at most one per rank. (Open MPI's -c is -n.)"),
        ]),
        ("Hosts", [
            (["--hosts H1,H2,...", "--host H1,...", "-H H1,...", "-host H1,...",
              "-hosts H1,..."],
             "Start the node processes on these hosts through ssh ($MPC_SSH). A host named "
             "twice is two nodes; host:SLOTS is accepted and the slot count ignored (ranks "
             "are threads, a host has no slots to fill)."),
            (["--hostfile FILE", "--machinefile FILE", "-hostfile FILE", "-machinefile FILE",
              "-f FILE"],
             "The same from a file: one host per line, # comments, blank lines ignored; "
             "Open MPI's slots=N and max_slots=N and hydra's host:N are accepted and "
             "ignored."),
        ]),
        ("Placement", [
            (["--bind core|none"],
             "core (default): each virtual processor bound to a core; none: the kernel "
             "places them."),
            (["--bind-to UNIT", "-bind-to UNIT"],
             "Open MPI's and hydra's spelling: core, hwthread and cpu bind to cores; none, "
             "socket, numa, package, board and the caches leave the virtual processors "
             "unbound. Modifiers after a colon are ignored."),
            (["--map block|cyclic"],
             "Ranks over node processes: contiguous blocks (default), or dealt out one by "
             "one."),
            (["--map-by POLICY", "-map-by POLICY"],
             "Open MPI's spelling: node is cyclic; slot, core, hwthread, socket, numa, "
             "package, board and the caches are block. Modifiers after a colon are "
             "ignored."),
            (["--oversubscribe", "-oversubscribe"],
             "Accepted and ignored: more ranks than cores is always allowed (ranks of a "
             "core take turns)."),
        ]),
        ("Running", [
            (["--progress MODE"],
             "collaborative (default): waiting ranks and idle cores poll the network for "
             "everyone; wait: a rank polls only for itself; thread: a progress thread per "
             "node process (thread-poll and thread-block choose how it waits)."),
            (["--net auto|tcp|ofi|verbs"],
             "Network between node processes: tcp (sockets), ofi (libfabric), verbs "
             "(InfiniBand); auto (default): verbs when a device exists, else tcp."),
            (["--stats"], "Per-rank and per-MPI-function statistics at the end."),
            (["--shared-globals"],
             "One program image for all ranks of a node process (globals shared, as "
             "threads)."),
            (["--initial-errhandler NAME", "-initial-errhandler NAME"],
             "The error handler MPI_COMM_WORLD and MPI_COMM_SELF start with, and that "
             "of errors raised outside any rank (MPI 4.1's initial error handler): "
             "mpi_errors_are_fatal (default), mpi_errors_abort or mpi_errors_return. "
             "MPI_INFO_ENV reports it as mpi_initial_errhandler."),
            (["--memory-alloc-kinds LIST", "-memory-alloc-kinds LIST"],
             "The memory allocation kinds the program asks for (MPI 4.1), comma "
             "separated: the info of MPI_COMM_WORLD and of every object of the world "
             "model reports under mpi_memory_alloc_kinds those supported (system and "
             "mpi with any restrictor; default mpi,system)."),
            (["--timeout S", "-timeout S"],
             "End the job after S seconds (exit status 124); first every node process "
             "prints what each rank waits for. MPIEXEC_TIMEOUT does the same when the "
             "option is not given."),
        ]),
        ("Environment of the ranks", [
            (["-x VAR[=VALUE]"],
             "Pass a variable to the ranks: its value here, or VALUE."),
            (["-genv VAR VALUE", "-env VAR VALUE"], "Hydra's spelling of -x VAR=VALUE."),
            (["-genvall"],
             "Pass every variable of mpcrun's environment, to other hosts too (local node "
             "processes inherit it anyway; over ssh, only MPC_* and -x variables go "
             "otherwise)."),
        ]),
        ("Output", [
            (["--tag-output", "-tag-output"],
             "Begin every line with the rank that wrote it and the stream, as Open MPI "
             "does: [1,RANK]<stdout>: or [1,RANK]<stderr>:."),
            (["-prepend-rank", "-l"], "Begin every line with [RANK] (hydra)."),
            (["--output-filename DIR", "-output-filename DIR"],
             "Write each rank's output to DIR/1/rank.RANK/stdout and stderr (Open MPI's "
             "layout; on the host the rank runs on) instead of mpcrun's."),
        ]),
        ("Information", [
            (["--info"],
             "Version, build options, network drivers and the devices and interfaces "
             "they find here, progress modes."),
            (["--version", "-version", "-V"], "The version."),
            (["-h", "--help", "-help"], "This text."),
        ]),
    ],
    "sections": [
        ("OUTPUT LABELS", [
            "Lines are labelled by the node process that hosts the rank: what a rank writes "
            "with printf, puts, C++ streams or Fortran print, and with write(2) on "
            "descriptors 1 and 2. Output of programs a rank starts goes out unlabelled.",
        ]),
        ("SECURITY", [
            "Nobody else can join a job. mpcrun makes a secret of 256 random bits per job; "
            "every PMI connection and every connection between node processes opens with a "
            "challenge-response over it (HMAC-SHA-256; the secret never crosses the "
            "network), and a connection that fails it is closed at once and logged, "
            "without harm to the job. The secret reaches local node processes in their "
            "environment, remote ones on the remote shell's standard input (never on a "
            "command line), and tasks of srun in srun's environment. Listeners bind "
            "loopback for a job on one host, otherwise the address of MPC_NET_IF (or of "
            "the first interface up), and close once every node process is connected.",
            "Under srun --mpi=pmi2 or hydra's mpiexec.hydra without mpcrun, node process "
            "0 makes the secret and publishes it through the launcher's PMI key-value "
            "store: it is as private as that store (Slurm serves it to the job's tasks "
            "only, but carries it between nodes unencrypted; hydra's own connections have "
            "no authentication).",
        ]),
        ("ENVIRONMENT", [
            "MPC_* variables set the runtime (the README lists them). MPIEXEC_TIMEOUT: "
            "seconds, as --timeout. MPC_SSH: the command that reaches other hosts "
            "(default ssh). MPC_SRUN: the srun command inside an allocation. MPC_PMI_HOST: "
            "the address remote node processes connect to. MPC_NET_IF: the interface "
            "listeners bind.",
        ]),
        ("EXIT STATUS", [
            "0 when every node process succeeded; otherwise the first failure's: its exit "
            "status, 128 plus its signal, the status given to MPI_Abort, 124 after "
            "--timeout. 2 for a usage error.",
        ]),
        ("SEE ALSO", ["mpicc(1)"]),
    ],
}

WRAPPERS = {
    "name": "mpicc",
    "aliases": ["mpicxx", "mpifort", "mpif77", "mpif90"],
    "summary": "compile and link MPI programs with fibermpi",
    "synopsis": [
        "mpicc [compiler options] files...",
        "mpicc -show | -compile-info | -link-info | --showme[:compile|:link|:incdirs|:libdirs|:libs]",
        "mpicxx, mpifort, mpif77, mpif90: the same for C++ and Fortran",
    ],
    "description": [
        "The wrappers run the C, C++ or Fortran compiler with what fibermpi needs: the "
        "include directory of mpi.h (and mpif.h, the mpi module), the library, and "
        "position-independent executables (every rank gets its own copy of the program's "
        "globals). They work from the build tree and from an installed prefix, wherever "
        "it was moved.",
    ],
    "options": [
        ("Showing instead of running", [
            (["-show", "--showme", "-showme"], "The whole command, not run."),
            (["-compile-info", "--showme:compile", "-showme:compile"],
             "The compiler and the flags to compile."),
            (["-link-info", "--showme:link", "-showme:link"],
             "The compiler and the flags to link."),
            (["--showme:incdirs", "-showme:incdirs"], "The include directories."),
            (["--showme:libdirs", "-showme:libdirs"], "The library directories."),
            (["--showme:libs", "-showme:libs"], "The libraries."),
            (["--showme:version", "-showme:version"], "fibermpi's version."),
            (["--help", "-help"],
             "This text (as the first argument; the compiler's own help: -show names "
             "the compiler)."),
        ]),
    ],
    "sections": [
        ("ENVIRONMENT", [
            "MPICH_CC, MPICH_CXX, MPICH_FC (or MPC_CC, MPC_CXX, MPC_FC) choose the "
            "underlying compiler.",
        ]),
        ("SEE ALSO", ["mpcrun(1)"]),
    ],
}

PAGES = {"mpcrun": MPCRUN, "mpicc": WRAPPERS}

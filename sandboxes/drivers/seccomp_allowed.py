"""The system calls a sandbox may make: the allow list of the seccomp filter (seccomp_filter.py).

Drawn up from Docker's default profile (moby/profiles seccomp/default.json), the calls it allows
a container without capabilities, less the few seccomp_filter.DENIED_CALLS refuses beyond it.
Every other call, and every call a kernel adds later, is refused until someone puts it here.
Calls with arguments that matter (clone, socket, personality) are allowed in seccomp_filter.py
under conditions, as Docker does. Names this machine's libseccomp or architecture lacks are
skipped (the call is then refused, as any call not listed).
"""

from __future__ import annotations

ALLOWED_CALLS = (
    # Files and folders: opening, reading, writing, metadata, links, extended attributes.
    *("open", "openat", "openat2", "creat", "close", "close_range", "read", "readv", "pread64"),
    *("preadv", "preadv2", "write", "writev", "pwrite64", "pwritev", "pwritev2", "lseek", "_llseek"),
    *("stat", "stat64", "lstat", "lstat64", "fstat", "fstat64", "fstatat64", "newfstatat", "statx"),
    *("statfs", "statfs64", "fstatfs", "fstatfs64", "access", "faccessat", "faccessat2"),
    *("truncate", "truncate64", "ftruncate", "ftruncate64", "fallocate", "fadvise64", "fadvise64_64"),
    *("readahead", "fsync", "fdatasync", "sync", "syncfs", "sync_file_range", "flock"),
    *("getdents", "getdents64", "getcwd", "chdir", "fchdir", "mkdir", "mkdirat", "rmdir"),
    *("rename", "renameat", "renameat2", "link", "linkat", "unlink", "unlinkat", "symlink"),
    *("symlinkat", "readlink", "readlinkat", "mknod", "mknodat", "umask", "chmod", "fchmod"),
    *("fchmodat", "fchmodat2", "chown", "chown32", "fchown", "fchown32", "fchownat", "lchown"),
    *("lchown32", "utime", "utimes", "utimensat", "utimensat_time64", "futimesat"),
    *("getxattr", "lgetxattr", "fgetxattr", "getxattrat", "setxattr", "lsetxattr", "fsetxattr"),
    *("setxattrat", "listxattr", "llistxattr", "flistxattr", "listxattrat", "removexattr"),
    *("lremovexattr", "fremovexattr", "removexattrat"),
    # Descriptors, pipes and zero-copy moves between them.
    *("dup", "dup2", "dup3", "fcntl", "fcntl64", "ioctl", "pipe", "pipe2", "splice", "tee"),
    *("vmsplice", "sendfile", "sendfile64", "copy_file_range", "cachestat"),
    # Waiting on descriptors, and the descriptors made for waiting.
    *("select", "_newselect", "pselect6", "pselect6_time64", "poll", "ppoll", "ppoll_time64"),
    *("epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old", "epoll_wait"),
    *("epoll_wait_old", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2", "signalfd"),
    *("signalfd4", "timerfd_create", "timerfd_settime", "timerfd_settime64", "timerfd_gettime"),
    *("timerfd_gettime64", "inotify_init", "inotify_init1", "inotify_add_watch"),
    *("inotify_rm_watch", "fanotify_mark"),
    # Asynchronous I/O (the old interface; io_uring is refused: seccomp_filter.DENIED_CALLS).
    *("io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents"),
    *("io_pgetevents_time64", "ioprio_get", "ioprio_set"),
    # Memory.
    *("brk", "mmap", "mmap2", "munmap", "mremap", "mprotect", "madvise", "mincore", "msync"),
    *("mlock", "mlock2", "mlockall", "munlock", "munlockall", "remap_file_pages", "membarrier"),
    *("memfd_create", "mseal", "map_shadow_stack", "pkey_alloc", "pkey_free", "pkey_mprotect"),
    # Processes and threads (clone is allowed without namespace flags only: seccomp_filter.py).
    *("fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid", "waitpid"),
    *("set_tid_address", "set_robust_list", "get_robust_list", "rseq", "arch_prctl"),
    *("set_thread_area", "get_thread_area", "prctl", "seccomp", "futex", "futex_time64"),
    *("futex_waitv", "futex_wait", "futex_wake", "futex_requeue", "restart_syscall"),
    *("pidfd_open", "pidfd_send_signal", "process_mrelease", "uretprobe"),
    # Who we are: ids (changing them needs capabilities a sandbox lacks), groups, sessions, limits.
    *("getpid", "getppid", "gettid", "getuid", "getuid32", "geteuid", "geteuid32", "getgid"),
    *("getgid32", "getegid", "getegid32", "getresuid", "getresuid32", "getresgid", "getresgid32"),
    *("getgroups", "getgroups32", "setuid", "setuid32", "setgid", "setgid32", "setreuid"),
    *("setreuid32", "setregid", "setregid32", "setresuid", "setresuid32", "setresgid"),
    *("setresgid32", "setfsuid", "setfsuid32", "setfsgid", "setfsgid32", "setgroups"),
    *("setgroups32", "capget", "capset", "getpgid", "getpgrp", "setpgid", "getsid", "setsid"),
    *("getrlimit", "ugetrlimit", "setrlimit", "prlimit64", "getrusage", "times", "getpriority"),
    *("setpriority", "uname", "sysinfo", "getrandom"),
    *("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"),
    # Scheduling.
    *("sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getattr", "sched_setattr"),
    *("sched_getparam", "sched_setparam", "sched_getscheduler", "sched_setscheduler"),
    *("sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval"),
    *("sched_rr_get_interval_time64", "getcpu"),
    # Signals.
    *("kill", "tkill", "tgkill", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending"),
    *("rt_sigsuspend", "rt_sigtimedwait", "rt_sigtimedwait_time64", "rt_sigqueueinfo"),
    *("rt_tgsigqueueinfo", "sigaltstack", "sigprocmask", "sigreturn", "pause", "alarm"),
    # Clocks and timers (reading them; setting the clock is refused).
    *("time", "gettimeofday", "clock_gettime", "clock_gettime64", "clock_getres"),
    *("clock_getres_time64", "clock_nanosleep", "clock_nanosleep_time64", "nanosleep"),
    *("getitimer", "setitimer", "timer_create", "timer_delete", "timer_getoverrun"),
    *("timer_gettime", "timer_gettime64", "timer_settime", "timer_settime64"),
    # Sockets (socket itself only for the families seccomp_filter.ALLOWED_FAMILIES names).
    *("socketpair", "socketcall", "bind", "listen", "accept", "accept4", "connect", "shutdown"),
    *("getsockname", "getpeername", "getsockopt", "setsockopt", "send", "sendto", "sendmsg"),
    *("sendmmsg", "recv", "recvfrom", "recvmsg", "recvmmsg", "recvmmsg_time64"),
    # System V and POSIX inter-process communication, within the sandbox's ipc namespace.
    *("ipc", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop"),
    *("semtimedop_time64", "semctl", "shmget", "shmat", "shmdt", "shmctl", "mq_open", "mq_unlink"),
    *("mq_timedsend", "mq_timedsend_time64", "mq_timedreceive", "mq_timedreceive_time64"),
    *("mq_notify", "mq_getsetattr"),
)

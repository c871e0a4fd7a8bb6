"""Egress: a sandbox reaches the endpoints it was given, through sandboxd, and nothing else.

The sandbox keeps its empty network namespace. sandboxd binds listening sockets on 127.0.0.1
inside each kernel's namespace (namespace.py; netns_listen.py where sandboxd is not root) and
serves them itself:

- endpoints.py: what a PUT may ask for (names, hosts, ports, modes) and the ports it gets
- policy.py: which destinations sandboxd connects to, resolved on its side (never link-local)
- forwarder.py: a tcp endpoint's port, forwarded to its one host and port
- proxy.py: the HTTP(S) proxy at 127.0.0.1:17000, admitting the http endpoints and the allow list
- listener.py: a listening socket inside, served by sandboxd, and the connections it accepted
- relay.py: bytes both ways between two sockets, counted
- connection_log.py: each sandbox's last connections, and the service's totals
- sandbox_egress.py: one sandbox's egress on every kernel it has (and egress.json for each)
- service.py: the service-wide settings and totals, and the reachability check
"""

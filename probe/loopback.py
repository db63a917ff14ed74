"""Keeps a local probe's rendezvous store on the loopback interface.

torchrun's TCP store listens on every interface whatever host it is given (a TCPStore server binds "::"), so a local
probe would accept connections from the network. With torch >= 2 the store can take an already bound socket
(``master_listen_fd``): every store server created in the launcher for a loopback host gets a socket bound to
127.0.0.1. Older torch has no such parameter; there the patch is a no-op.
"""
import socket

LOOPBACK = ("127.0.0.1", "localhost")


def bind_stores_to_loopback():
    """Replaces TCPStore in the modules torchrun uses with a subclass that binds its server to 127.0.0.1."""
    import torch.distributed as dist
    base = dist.TCPStore
    # pybind11 writes the signature into the docstring; torch < 2 has no master_listen_fd.
    if "master_listen_fd" not in (base.__init__.__doc__ or ""):
        return False

    class LoopbackTCPStore(base):
        def __init__(self, *args, **kwargs):
            kw = dict(zip(["host_name", "port", "world_size", "is_master", "timeout", "wait_for_workers",
                           "multi_tenant", "master_listen_fd", "use_libuv"], args))
            kw.update(kwargs)
            sock = None
            if kw.get("is_master") and kw.get("master_listen_fd") is None and kw.get("host_name") in LOOPBACK:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("127.0.0.1", int(kw.get("port") or 0)))
                kw["port"] = sock.getsockname()[1]
                kw["master_listen_fd"] = sock.fileno()
            super().__init__(**kw)
            # The store serves on this socket's descriptor: it must stay open as long as the store lives.
            self._shardlens_socket = sock

    import torch.distributed.rendezvous as rdzv
    from torch.distributed.elastic.rendezvous import c10d_rendezvous_backend, static_tcp_rendezvous
    for module in (dist, rdzv, c10d_rendezvous_backend, static_tcp_rendezvous):
        if getattr(module, "TCPStore", None) is base:
            module.TCPStore = LoopbackTCPStore
    return True

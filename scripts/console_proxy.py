"""A TCP proxy the console's browser test puts between the browser and `esctl serve`, so it can
cut every connection at once (as a dropped network does) and then let the browser reconnect."""

import socket
import threading


class DroppingProxy:
    """Forwards connections on a free loopback port to `target` (host, port) until dropped."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.open: set[socket.socket] = set()
        self.refusing = False
        self.upstreams: set[socket.socket] = set()
        # Whether a request carried `Last-Event-ID` (an EventSource resuming).
        self.resumed = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                refusing = self.refusing
            if refusing:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.open.update((client, upstream))
                self.upstreams.add(upstream)
            threading.Thread(target=self.pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self.pump, args=(upstream, client), daemon=True).start()

    def pump(self, source: socket.socket, destination: socket.socket):
        try:
            while data := source.recv(65536):
                if source not in self.upstreams and b"last-event-id:" in data.lower():
                    self.resumed = True
                destination.sendall(data)
        except OSError:
            pass
        for end in (source, destination):
            self.close(end)

    def close(self, end: socket.socket):
        with self.lock:
            self.open.discard(end)
            self.upstreams.discard(end)
        try:
            end.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        end.close()

    def drop(self):
        """Cuts every open connection and refuses new ones until `restore`."""
        with self.lock:
            self.refusing = True
            ends = list(self.open)
        for end in ends:
            self.close(end)

    def restore(self):
        with self.lock:
            self.refusing = False

    def stop(self):
        self.drop()
        self.listener.close()

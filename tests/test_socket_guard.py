import socket

import pytest


def test_non_loopback_connections_fail():
    s = socket.socket()
    try:
        with pytest.raises(OSError, match="network access blocked"):
            s.connect(("93.184.216.34", 80))
    finally:
        s.close()


def test_loopback_is_allowed(hub):
    import urllib.error
    import urllib.request

    try:  # without a token whoami answers 401: what matters is that the connection was made
        urllib.request.urlopen(hub.url + "/api/whoami-v2", timeout=10)
    except urllib.error.HTTPError as e:
        assert e.code == 401

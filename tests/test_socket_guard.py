"""The conftest socket guard: any connection off loopback fails the test; loopback (the local hub) works."""
import socket

import pytest

OUTSIDE = [
    (socket.AF_INET, ("93.184.216.34", 80)),
    (socket.AF_INET, ("10.0.0.1", 443)),
    (socket.AF_INET6, ("2606:2800:220:1:248:1893:25c8:1946", 80, 0, 0)),
    (socket.AF_INET6, ("::ffff:93.184.216.34", 80, 0, 0)),  # IPv4 through an IPv6 socket
]


@pytest.mark.parametrize("family, address", OUTSIDE, ids=[a[0] for _, a in OUTSIDE])
@pytest.mark.parametrize("method", ["connect", "connect_ex"])
def test_outside_connections_fail(family, address, method):
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
    except OSError:
        pytest.skip("no IPv6 on this machine")
    s.settimeout(2)
    try:
        # pytest.raises fails the test if the call returns: a connection that got through, or an error code
        # from connect_ex (which would mean the guard let the attempt reach the network)
        with pytest.raises(OSError, match="network access blocked in tests"):
            getattr(s, method)(address)
    finally:
        s.close()


def test_udp_connect_is_blocked_too():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        with pytest.raises(OSError, match="network access blocked in tests"):
            s.connect(("8.8.8.8", 53))
    finally:
        s.close()


def test_loopback_reaches_the_local_hub(hub):
    import json
    import urllib.request

    token = next(iter(hub.tokens))
    request = urllib.request.Request(hub.url + "/api/whoami-v2", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:  # an HTTPError or URLError fails the test
        assert response.status == 200
        assert json.load(response)["name"] == "local"

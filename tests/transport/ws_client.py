"""A WebSocket client of parley's app-server for the tests: requests by id,
everything else (notifications, server requests) kept in arrival order until
a wait() wants it."""
import asyncio
import base64
import hashlib
import hmac
import json
import time

import websockets


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign_jwt(secret, claims):
    """An HS256 token of exactly `claims`, signed with `secret` (str or bytes)."""
    key = secret.encode() if isinstance(secret, str) else secret
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64(json.dumps(claims).encode())
    sig = hmac.new(key, (header + "." + payload).encode(), hashlib.sha256).digest()
    return header + "." + payload + "." + _b64(sig)


def signed_token(secret, claims):
    """An HS256 bearer token with `claims`, valid for an hour, signed with `secret`."""
    return sign_jwt(secret, dict(claims, exp=int(time.time()) + 3600))


class WsClient:
    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0
        self.inbox = []

    @classmethod
    async def connect(cls, url, bearer=None, unix=None, name="test", capabilities=None):
        """Connects (to a Unix socket when `unix` is its path) and initializes."""
        headers = {"Authorization": "Bearer " + bearer} if bearer else {}
        if unix:
            ws = await websockets.unix_connect(unix, "ws://localhost/", max_size=None,
                                               extra_headers=headers)
        else:
            ws = await websockets.connect(url, extra_headers=headers, max_size=None)
        c = cls(ws)
        params = {"clientInfo": {"name": name, "version": "1"}}
        if capabilities is not None:
            params["capabilities"] = capabilities
        await c.call("initialize", params)
        return c

    async def send(self, method, params):
        """Sends a request; its id."""
        self.next_id += 1
        await self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        return self.next_id

    async def raw_call(self, method, params):
        """The answer's exact text, and the answer."""
        i = await self.send(method, params)
        while True:
            line = await asyncio.wait_for(self.ws.recv(), 20)
            m = json.loads(line)
            if m.get("id") == i and "method" not in m:
                return line, m
            self.inbox.append(m)

    async def call(self, method, params):
        return (await self.raw_call(method, params))[1]

    async def wait(self, pred, timeout=20):
        for m in self.inbox:
            if pred(m):
                self.inbox.remove(m)
                return m
        while True:
            m = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
            if pred(m):
                return m
            self.inbox.append(m)

    async def method(self, name, timeout=20):
        return await self.wait(lambda m: m.get("method") == name, timeout)

    async def answer(self, request, decision):
        await self.ws.send(json.dumps({"id": request["id"], "result": {"decision": decision}}))

    async def drain(self, seconds=0.5):
        """Keeps what arrives within `seconds` of quiet."""
        try:
            while True:
                self.inbox.append(json.loads(await asyncio.wait_for(self.ws.recv(), seconds)))
        except asyncio.TimeoutError:
            pass

    async def close(self):
        await self.ws.close()

"""Server reflection that serves voxlite's proto with its comments, so grpcurl shows the docs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from importlib.resources import files
from typing import Any

import grpc
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection
from grpc_reflection.v1alpha._async import ReflectionServicer

MAX_STREAMS = 32
"""Reflection streams open at once, all callers together. grpcurl holds one open for as long as
its command runs, a StreamingSynthesize session typed by hand included: a few such sessions
must leave room for every other grpcurl command. Each costs a few kB while it lasts."""
MAX_REQUESTS = 100
"""Requests one reflection stream may make (grpcurl's describe makes a handful). Each answer
is a whole file descriptor, about 16 kB for ours, for a request of a few bytes: unbounded, one
stream could draw hundreds of MB."""


def documented_files() -> dict[str, bytes]:
    """Our .proto files as serialized FileDescriptorProtos with source info (comments).

    The generated *_pb2 modules drop comments, and protobuf's CopyToProto drops them too, so
    scripts/gen-proto writes tts.binpb beside the generated code.
    """
    data = files("voxlite.tts.v1").joinpath("tts.binpb").read_bytes()
    return {
        f.name: f.SerializeToString()
        for f in descriptor_pb2.FileDescriptorSet.FromString(data).file
    }


class DocumentedReflectionServicer(ReflectionServicer):
    """grpc's reflection servicer, answering with the documented copy of our files.

    It hooks the two lookups that return file descriptors; grpcurl's list, describe and calls
    use only those. (They are private methods of grpcio-reflection: tests/test_process.py
    checks that `grpcurl describe` shows the comments.)
    """

    def __init__(self, service_names: list[str]) -> None:
        super().__init__(service_names)
        self._documented = documented_files()
        self.streams = 0
        """Reflection streams open now."""

    async def ServerReflectionInfo(self, request_iterator: Any, context: Any) -> AsyncIterator[Any]:
        """grpc's, within MAX_STREAMS streams at once and MAX_REQUESTS requests a stream."""
        if self.streams >= MAX_STREAMS:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{self.streams} reflection streams are open, the most this server serves at "
                "once: try again in a moment",
            )
        self.streams += 1
        responses = super().ServerReflectionInfo(request_iterator, context)
        try:
            answered = 0
            async for response in responses:
                if answered == MAX_REQUESTS:
                    await context.abort(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"one reflection stream may make {MAX_REQUESTS} requests: open another",
                    )
                answered += 1
                yield response
        finally:
            self.streams -= 1
            await responses.aclose()

    def _swap(self, response: Any) -> Any:
        if response.HasField("file_descriptor_response"):
            protos = response.file_descriptor_response.file_descriptor_proto
            for i, raw in enumerate(protos):
                name = descriptor_pb2.FileDescriptorProto.FromString(raw).name
                if name in self._documented:
                    protos[i] = self._documented[name]
        return response

    def _file_by_filename(self, request: Any, filename: str) -> Any:
        return self._swap(super()._file_by_filename(request, filename))

    def _file_containing_symbol(self, request: Any, fully_qualified_name: str) -> Any:
        return self._swap(super()._file_containing_symbol(request, fully_qualified_name))


def enable(server: Any, service_names: list[str]) -> DocumentedReflectionServicer:
    """Serve reflection for `service_names` (plus the reflection service itself) on `server`."""
    from grpc_reflection.v1alpha import reflection_pb2_grpc

    names = [*service_names, reflection.SERVICE_NAME]
    servicer = DocumentedReflectionServicer(names)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    return servicer

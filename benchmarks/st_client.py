"""A Streamlit session spoken over the app's own websocket protocol, as a browser tab speaks it.

What the browser's frontend does, for the installed Streamlit (1.67, Starlette server): it opens
the websocket ``/_stcore/stream`` (subprotocol ``streamlit``), sends a ``BackMsg`` whose
``rerun_script`` is a ``ClientState`` (the URL's query string, the page's name from its path or the
page script hash the server sent, the widget values, the hashes of the messages it already holds)
and draws the ``ForwardMsg``s that come back — one per websocket frame — until ``script_finished``.
Streamlit's message cache lives in the client since 1.4x: the server replaces a cacheable message by
a ``ref_hash`` reference only when the rerun listed that hash in ``cached_message_hashes``, and the
client takes the message from its own cache (a new tab starts with an empty one). :class:`Session`
does the same, so a render here receives exactly the deltas a fresh browser tab receives, without
drawing them.

No Streamlit server code runs in this process: only the generated protobuf classes
(``streamlit.proto``) are used, to build and parse the messages.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect

STREAM_PATH = "/_stcore/stream"
WIDGET_TYPES = ("button", "number_input", "text_input")  # the ones :meth:`Session.widget_state` can set


class RenderError(RuntimeError):
    """A page run that failed: an exception or error box in its deltas, a compile error, an unknown page."""


@dataclass
class Render:
    """What one script run sent: every delta, the element types drawn and the widgets by label.

    Attributes
    ----------
    seconds : float
        From sending the rerun request to ``script_finished`` (every delta received before it).
    deltas : int
        Number of delta messages (elements, blocks, element updates).
    elements : dict of str to int
        Count of each new element type (e.g. ``plotly_chart``, ``dataframe``, ``markdown``).
    widgets : dict of str to tuple
        ``widget id -> (element type, widget proto)`` of every widget drawn.
    cache_refs : int
        Messages that arrived as a ``ref_hash`` and were taken from the session's cache.
    texts : list of str
        The text of every markdown element (``st.markdown``, ``st.caption``, …), in order.
    """

    seconds: float = 0.0
    deltas: int = 0
    elements: dict = field(default_factory=dict)
    widgets: dict = field(default_factory=dict)
    cache_refs: int = 0
    texts: list = field(default_factory=list)


@dataclass
class Session:
    """One browser-tab-like app session: a websocket to ``url`` and the messages cached so far.

    ``query_string`` is the URL's (without ``?``): the one the tab was opened with, then whatever the
    page sets (``st.query_params``, widgets bound to the URL), as the browser's address bar follows
    it. Use as ``async with Session(url) as s: render = await s.run("Estimate", timeout=60)``.
    """

    url: str
    query_string: str = ""
    page_hash: str = ""
    cache: dict = field(default_factory=dict)
    _ws: object = None

    async def __aenter__(self) -> Session:
        ws_url = self.url.replace("http://", "ws://", 1) + STREAM_PATH
        self._ws = await connect(ws_url, subprotocols=["streamlit"], max_size=None, compression=None,
                                 ping_interval=None, open_timeout=30, close_timeout=5)
        return self

    async def __aexit__(self, *exc) -> None:
        await self._ws.close()

    async def run(self, page: str, timeout: float,
                  widgets: tuple[WidgetState, ...] = ()) -> Render:
        """Rerun ``page`` (its URL path name, e.g. ``"Estimate"``) and read its messages to the end.

        Parameters
        ----------
        page : str
            The page's URL path name, as the browser sends it on first load.
        timeout : float
            Seconds allowed for the whole run; ``TimeoutError`` after that.
        widgets : tuple of WidgetState
            Widget values to send (the server keeps the previous value of every widget not sent).

        Returns
        -------
        Render

        Raises
        ------
        RenderError
            On an exception element, an error alert, a compile error or an unknown page.
        """
        request = BackMsg()
        state = request.rerun_script
        state.query_string = self.query_string
        state.page_name = page
        state.page_script_hash = self.page_hash
        state.widget_states.widgets.extend(widgets)
        state.cached_message_hashes.extend(self.cache)
        state.context_info.timezone = "UTC"
        state.context_info.locale = "en-US"
        render = Render()
        start = time.perf_counter()
        await self._ws.send(request.SerializeToString())
        async with asyncio.timeout(timeout):
            while not self._finished(await self._receive(render), render, page):
                pass
        render.seconds = time.perf_counter() - start
        return render

    async def _receive(self, render: Render) -> ForwardMsg:
        msg = ForwardMsg()
        msg.ParseFromString(await self._ws.recv())
        if msg.WhichOneof("type") == "ref_hash":
            if msg.ref_hash not in self.cache:
                raise RenderError(f"the server referred to message {msg.ref_hash}, which this session never received")
            render.cache_refs += 1
            msg = self.cache[msg.ref_hash]
        elif msg.metadata.cacheable:
            self.cache[msg.hash] = msg
        return msg

    def _finished(self, msg: ForwardMsg, render: Render, page: str) -> bool:
        kind = msg.WhichOneof("type")
        if kind == "navigation":  # the page that runs (new_session names the main script)
            self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":  # the page changed its URL (st.query_params, bound widgets)
            self.query_string = msg.page_info_changed.query_string
        elif kind == "page_not_found":
            raise RenderError(f"page {page!r} not found")
        elif kind == "delta":
            render.deltas += 1
            if msg.delta.WhichOneof("type") == "new_element":
                _count_element(msg.delta.new_element, render, page)
        elif kind == "script_finished":
            if msg.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                raise RenderError(f"{page}: the script did not compile")
            return msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN  # st.rerun() runs it again
        return False


def _count_element(element, render: Render, page: str) -> None:
    kind = element.WhichOneof("type")
    render.elements[kind] = render.elements.get(kind, 0) + 1
    if kind == "exception":
        raise RenderError(f"{page}: {element.exception.type}: {element.exception.message[:300]}")
    if kind == "alert" and element.alert.format == Alert.ERROR:
        raise RenderError(f"{page}: error box: {element.alert.body[:300]}")
    if kind == "markdown":
        render.texts.append(element.markdown.body)
    if kind in WIDGET_TYPES:
        widget = getattr(element, kind)
        render.widgets[widget.id] = (kind, widget)


def widget_state(render: Render, key: str, value=True) -> WidgetState:
    """The state that sets the widget with user key ``key`` (drawn in ``render``) to ``value``.

    A button gets a trigger (``value`` ignored), a number input its int or float value, a text input
    its string — the same ``WidgetState`` the browser sends after the user types or clicks. Streamlit
    ends the id of a widget that has a key with ``-{key}``; labels can repeat across tabs, keys not.
    """
    matches = [entry for widget_id, entry in render.widgets.items() if widget_id.endswith(f"-{key}")]
    if len(matches) != 1:
        raise RenderError(f"{len(matches)} widgets with key {key!r} on the page")
    kind, widget = matches[0]
    state = WidgetState(id=widget.id)
    if kind == "button":
        state.trigger_value = True
    elif kind == "number_input":
        if widget.data_type == NumberInput.INT:
            state.int_value = int(value)
        else:
            state.double_value = float(value)
    else:
        state.string_value = str(value)
    return state

"""What the chat-log formats share: a chat's messages in one intermediate form, every frame
made from them (events, requests, turns, sessions, problems), the verbs and the ``context``
report, and where the chats are, for every format that plugs in a :class:`~.messages.Spec`.

Imports: nothing (its modules say what they import). A format hands the shared code its
:class:`~.messages.Spec` (its ``format`` value and label, its parser, its resolver, its
provider, its windows, and, when its files do not become messages, its own batches) and makes
its own :class:`~.store.Store` (its home folder, its file names, how a file names its
session), so the formats agree wherever their files do and differ only in how a file becomes a
:class:`~.messages.Chat` and where the agent keeps it. A format's verbs module is its Spec and
:func:`~.verbs.verbs`; its store module, its Store.

Modules, in the order data flows:

* ``messages``: the intermediate form (:class:`~.messages.Message`, :class:`~.messages.Chat`),
  the :class:`~.messages.Spec`, and the values a parser reads (counts, usage, parts, lines);
* ``builders``: a batch's frames from its chats (decode, events, requests, turns, sessions);
* ``verbs``: the batch functions, the verbs made for a Spec and the ``context`` report;
* ``store``: where the chats are (standard library only: the plugins plan files with it).

The rules every format of the family keeps are in ``messages``' docstring.
"""

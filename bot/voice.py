"""Voice notes: within the limits and the person's consent, the adapter downloads the audio, the speech-to-text
server (`brain.media.speech`) turns it into words, and the dialog handles those words as if typed. Every way this
can fail is one translated message and changes nothing; the audio is only held in memory while it is transcribed.

`VoiceNotes.listen` returns the transcript, or None after saying why there is none."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from bot.inbound import Media
from bot.media import remote_allowed
from bot.turn import Turn
from brain.i18n import tr
from brain.media.speech import SpeechToText, SpeechUnavailable, SpeechUnreadable

log = logging.getLogger(__name__)

DEFAULT_MAX_SECONDS = 300
DEFAULT_MAX_BYTES = 20 * 1024 * 1024
SHOWN_CHARACTERS = 300  # of the transcript, in the "🎙 …" line


@dataclass(frozen=True)
class VoiceLimits:
    max_seconds: int = DEFAULT_MAX_SECONDS
    max_bytes: int = DEFAULT_MAX_BYTES


@dataclass
class VoiceTimings:
    """Where a voice note's time went (the benchmark reads them): the download and the transcription."""

    download_ms: float = 0.0
    transcribe_ms: float = 0.0
    notes: int = 0


class VoiceNotes:
    """`speech`: the speech-to-text client, None when no server is configured (STT_URL)."""

    def __init__(self, speech: SpeechToText | None = None, limits: VoiceLimits = VoiceLimits()) -> None:
        self.speech = speech
        self.limits = limits
        self.timings = VoiceTimings()

    async def listen(self, turn: Turn, media: Media) -> str | None:
        """The words of the voice note; None after one message that says why there are none. The checks that need
        no download come first; the audio is dropped when this returns."""
        speech = self.speech
        if speech is None:
            turn.say(tr("I can't listen to voice notes yet: no speech-to-text server is set up. "
                        "Please type your message instead."))
            return None
        if not await remote_allowed(turn, local=speech.local):
            turn.say(tr("Your voice note would go to a speech-to-text server that does not run on your own "
                        "hardware, and you haven't allowed that for sensitive content. Nothing was sent. "
                        "/settings can allow it; or type your message."))
            return None
        limits = self.limits
        if media.duration_s is not None and media.duration_s > limits.max_seconds:
            self._too_long(turn, media.duration_s)
            return None
        if media.size is not None and media.size > limits.max_bytes:
            self._too_large(turn, media.size)
            return None
        async with turn.brain.db.unshared():  # no connection held while the audio travels
            return await self._transcribe(turn, speech, media)

    async def _transcribe(self, turn: Turn, speech: SpeechToText, media: Media) -> str | None:
        started = time.perf_counter()
        try:
            audio = await media.fetch()
        except Exception as problem:  # the platform's download failed: the person can send it again
            log.info("downloading a voice note failed: %s", problem)
            turn.say(tr("I couldn't download that voice note. Nothing was saved; please send it again."))
            return None
        downloaded = time.perf_counter()
        try:
            if len(audio) > self.limits.max_bytes:
                self._too_large(turn, len(audio))
                return None
            heard = await speech.transcribe(audio, file_name=media.file_name or "voice.ogg",
                                            mime=media.mime or "audio/ogg", language=turn.user.locale)
        except SpeechUnavailable as problem:
            log.warning("the speech-to-text server failed: %s", problem)
            turn.say(tr("I can't reach the speech-to-text server right now, so I couldn't listen to your voice "
                        "note. Nothing was saved; send it again in a minute or type it."))
            return None
        except SpeechUnreadable as problem:
            log.info("a voice note could not be transcribed: %s", problem)
            turn.say(tr("I couldn't make out any words in that voice note. Nothing was saved; please try again "
                        "or type it."))
            return None
        finally:
            del audio  # the only reference: the audio is gone with it
            timings = self.timings
            timings.download_ms += (downloaded - started) * 1000
            timings.transcribe_ms += (time.perf_counter() - downloaded) * 1000
            timings.notes += 1
        return heard.text

    @staticmethod
    def show(turn: Turn, transcript: str) -> None:
        """The words heard, shown to the person ("🎙 …") on top of the first reply to them, so a voice note is
        answered in as many messages as the same words typed."""
        shown = transcript if len(transcript) <= SHOWN_CHARACTERS else transcript[:SHOWN_CHARACTERS].rstrip() + "…"
        line = turn.heard_line = turn.t(tr("🎙 {transcript}", transcript=shown))
        if turn.replies:
            first = turn.replies[0]
            first.text = f"{line}\n\n{first.text}" if first.text else line
        else:
            turn.say(line)

    def _too_long(self, turn: Turn, seconds: int) -> None:
        turn.say(tr("That voice note is too long ({seconds} s; at most {max} s). Nothing was saved; please send "
                    "a shorter one or type it.", seconds=seconds, max=self.limits.max_seconds))

    def _too_large(self, turn: Turn, size: int) -> None:
        turn.say(tr("That voice note is too large ({size} MB; at most {max} MB). Nothing was saved; please send "
                    "a shorter one or type it.", size=_megabytes(size), max=_megabytes(self.limits.max_bytes)))

    async def close(self) -> None:
        if self.speech is not None:
            await self.speech.close()


def _megabytes(size: int) -> float:
    return round(size / 1024 / 1024, 1)

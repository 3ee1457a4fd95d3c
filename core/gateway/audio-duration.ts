/**
 * How long an uploaded audio file plays, read from its headers (WAV, MP3, FLAC), so transcriptions
 * can be reserved and billed by duration. Formats we cannot read (M4A, OGG, WebM, ...) fall back to
 * their byte size at an assumed bitrate, which is documented in the README.
 */

/** Reservations assume this low a bitrate for unreadable files (16 kbit/s): most audio is denser, so the guess errs long. */
export const RESERVE_BYTES_PER_SECOND = 2_000;
/** Settling an unreadable file assumes 32 kbit/s (speech-grade Opus/AAC). */
export const SETTLE_BYTES_PER_SECOND = 4_000;

export interface AudioDuration {
  seconds: number;
  /** False when the duration is a guess from the byte size. */
  measured: boolean;
}

export function audioDuration(bytes: Buffer): AudioDuration {
  const measured = wavSeconds(bytes) ?? flacSeconds(bytes) ?? mp3Seconds(bytes);
  if (measured !== null && Number.isFinite(measured) && measured >= 0) return { seconds: measured, measured: true };
  return { seconds: bytes.length / SETTLE_BYTES_PER_SECOND, measured: false };
}

/** The duration to reserve for: the measured one, else the byte size at the lowest plausible bitrate. */
export function reserveSeconds(bytes: Buffer, d: AudioDuration): number {
  return d.measured ? d.seconds : bytes.length / RESERVE_BYTES_PER_SECOND;
}

function wavSeconds(b: Buffer): number | null {
  if (b.length < 12 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WAVE') return null;
  let pos = 12;
  let byteRate = 0;
  while (pos + 8 <= b.length) {
    const id = b.toString('latin1', pos, pos + 4);
    const size = b.readUInt32LE(pos + 4);
    if (id === 'fmt ' && pos + 16 <= b.length) byteRate = b.readUInt32LE(pos + 16);
    if (id === 'data') {
      if (byteRate <= 0) return null;
      // A streamed WAV may say 0 or 0xFFFFFFFF: what is in the file is what plays.
      const data = size === 0 || size === 0xffffffff ? b.length - pos - 8 : Math.min(size, b.length - pos - 8);
      return data / byteRate;
    }
    pos += 8 + size + (size % 2);
  }
  return null;
}

function flacSeconds(b: Buffer): number | null {
  if (b.length < 42 || b.toString('latin1', 0, 4) !== 'fLaC') return null;
  // STREAMINFO is the first metadata block: sample rate (20 bits) and total samples (36 bits) at 18..25.
  const s = 8 + 10;
  const rate = (b[s] << 12) | (b[s + 1] << 4) | (b[s + 2] >> 4);
  const total = (b[s + 3] & 0x0f) * 2 ** 32 + b.readUInt32BE(s + 4);
  if (rate <= 0 || total <= 0) return null;
  return total / rate;
}

const MP3_BITRATES_V1_L3 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MP3_BITRATES_V2_L3 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const MP3_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

function mp3Seconds(b: Buffer): number | null {
  let pos = 0;
  if (b.length >= 10 && b.toString('latin1', 0, 3) === 'ID3') {
    pos = 10 + ((b[6] & 0x7f) << 21 | (b[7] & 0x7f) << 14 | (b[8] & 0x7f) << 7 | (b[9] & 0x7f));
  }
  const limit = Math.min(b.length - 4, pos + 65_536);
  for (; pos < limit; pos++) {
    if (b[pos] !== 0xff || (b[pos + 1] & 0xe0) !== 0xe0) continue;
    const version = (b[pos + 1] >> 3) & 3; // 3: MPEG1, 2: MPEG2, 0: MPEG2.5
    const layer = (b[pos + 1] >> 1) & 3; // 1: layer III
    const bitrateIdx = b[pos + 2] >> 4;
    const rateIdx = (b[pos + 2] >> 2) & 3;
    if (version === 1 || layer !== 1 || bitrateIdx === 0 || bitrateIdx === 15 || rateIdx === 3) continue;
    const kbps = (version === 3 ? MP3_BITRATES_V1_L3 : MP3_BITRATES_V2_L3)[bitrateIdx];
    const sampleRate = MP3_RATES[version][rateIdx];
    const samplesPerFrame = version === 3 ? 1152 : 576;
    // A Xing/Info header (VBR files) gives the frame count; its offset depends on version and channels.
    const mono = (b[pos + 3] >> 6) === 3;
    const side = version === 3 ? (mono ? 17 : 32) : mono ? 9 : 17;
    const x = pos + 4 + side;
    if (x + 12 <= b.length) {
      const tag = b.toString('latin1', x, x + 4);
      if ((tag === 'Xing' || tag === 'Info') && (b.readUInt32BE(x + 4) & 1) === 1) {
        return (b.readUInt32BE(x + 8) * samplesPerFrame) / sampleRate;
      }
    }
    return ((b.length - pos) * 8) / (kbps * 1000);
  }
  return null;
}

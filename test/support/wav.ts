/** A real PCM WAV file of silence (mono): its header says how long it plays, for the audio-duration money paths. */
export function silentWav(opts: { seconds: number; sampleRate: number; bitsPerSample: 8 | 16 }): Buffer {
  const bytesPerSample = opts.bitsPerSample / 8;
  const byteRate = opts.sampleRate * bytesPerSample;
  // Silence is 0x80 in unsigned 8-bit PCM and 0 in signed 16-bit PCM.
  const data = Buffer.alloc(byteRate * opts.seconds, opts.bitsPerSample === 8 ? 0x80 : 0);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(opts.sampleRate, 24);
  h.writeUInt32LE(byteRate, 28);
  h.writeUInt16LE(bytesPerSample, 32);
  h.writeUInt16LE(opts.bitsPerSample, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

import nodemailer from 'nodemailer';

/** One delivery to an SMTP listener on loopback, over its own connection: the final reply (code 0: no reply). */
export async function smtpDeliver(port: number, to: string | string[], raw: string | Buffer, from = ''): Promise<{ code: number; response: string }> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  try {
    const info = await transport.sendMail({ envelope: { from, to: Array.isArray(to) ? to : [to] }, raw });
    return { code: Number(info.response.slice(0, 3)), response: info.response };
  } catch (err) {
    const e = err as { responseCode?: number; response?: string; message: string };
    return { code: e.responseCode ?? 0, response: e.response ?? e.message };
  } finally {
    transport.close();
  }
}

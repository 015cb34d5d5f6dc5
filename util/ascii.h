/* Locale-free character classes for protocol grammar. <ctype.h> depends on
 * the locale and on the sign of char; these take the byte as unsigned. */
#ifndef EG_ASCII_H
#define EG_ASCII_H

static inline int ascii_is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static inline int ascii_is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static inline int ascii_is_xdigit(unsigned char c)
{
	return ascii_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static inline unsigned char ascii_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + ('a' - 'A')) : c;
}
/* RFC 9110 tchar. */
static inline int ascii_is_tchar(unsigned char c)
{
	if (ascii_is_digit(c) || ascii_is_alpha(c))
		return 1;
	switch (c) {
	case '!': case '#': case '$': case '%': case '&': case '\'': case '*':
	case '+': case '-': case '.': case '^': case '_': case '`': case '|':
	case '~':
		return 1;
	}
	return 0;
}
/* Visible ASCII; obs-text (>= 0x80) is deliberately excluded. */
static inline int ascii_is_vchar(unsigned char c) { return c >= 0x21 && c <= 0x7e; }

#endif

// Java's own XSD validator (the JDK's Xerces, javax.xml.validation), as Hacienda validates a received comprobante:
// for each XML file, the FIRST schema error's message, line and column, one JSON line per file:
//   {"file":"a.xml","valid":false,"message":"cvc-...","line":1,"column":1234}
// Run with the single-file source launcher:
//   java test/java/XsdValidate.java A.xsd a1.xml a2.xml ... [B.xsd b1.xml ...]
// (each .xsd argument is the schema of the files after it). Messages in English, Xerces' own (Locale.ROOT bundle).
// The xmldsig schema's DOCTYPE names the W3C's XMLSchema.dtd: the imported schema is read without its external
// DTD (the internal subset stays), so that nothing is fetched from the network.
import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.transform.stream.StreamSource;
import javax.xml.validation.Schema;
import javax.xml.validation.SchemaFactory;
import javax.xml.validation.Validator;
import org.w3c.dom.ls.DOMImplementationLS;
import org.w3c.dom.ls.LSInput;
import org.xml.sax.ErrorHandler;
import org.xml.sax.SAXException;
import org.xml.sax.SAXParseException;

public class XsdValidate {
  static final class First extends SAXException {
    final SAXParseException error;

    First(SAXParseException e) {
      super(e.getMessage());
      error = e;
    }
  }

  static String json(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  /** An imported schema, read from its file without the external DTD of its DOCTYPE. */
  static LSInput withoutExternalDtd(String type, String namespace, String publicId, String systemId, String baseUri) {
    try {
      URI uri = baseUri == null ? URI.create(systemId) : URI.create(baseUri).resolve(systemId);
      String text = Files.readString(Path.of(uri));
      text = text.replaceFirst("(<!DOCTYPE\\s+\\S+)\\s+PUBLIC\\s+\"[^\"]*\"\\s+\"[^\"]*\"", "$1");
      DOMImplementationLS ls = (DOMImplementationLS) DocumentBuilderFactory.newInstance().newDocumentBuilder().getDOMImplementation();
      LSInput input = ls.createLSInput();
      input.setStringData(text);
      input.setSystemId(uri.toString());
      input.setPublicId(publicId);
      return input;
    } catch (Exception e) {
      return null;
    }
  }

  public static void main(String[] args) throws Exception {
    Locale.setDefault(Locale.ROOT);
    SchemaFactory factory = SchemaFactory.newInstance(XMLConstants.W3C_XML_SCHEMA_NS_URI);
    factory.setResourceResolver(XsdValidate::withoutExternalDtd);
    ErrorHandler stopAtFirst = new ErrorHandler() {
      public void warning(SAXParseException e) {}

      public void error(SAXParseException e) throws SAXException {
        throw new First(e);
      }

      public void fatalError(SAXParseException e) throws SAXException {
        throw new First(e);
      }
    };
    Schema schema = null;
    for (String arg : args) {
      if (arg.endsWith(".xsd")) {
        schema = factory.newSchema(new File(arg));
        continue;
      }
      if (schema == null) throw new IllegalArgumentException("a schema (.xsd) must come before the documents");
      Validator v = schema.newValidator();
      v.setErrorHandler(stopAtFirst);
      String out;
      try {
        v.validate(new StreamSource(new File(arg)));
        out = "\"valid\":true";
      } catch (SAXException x) {
        SAXParseException e = x instanceof First ? ((First) x).error : x instanceof SAXParseException ? (SAXParseException) x : null;
        if (e == null) throw x;
        out = "\"valid\":false,\"message\":" + json(e.getMessage()) + ",\"line\":" + e.getLineNumber() + ",\"column\":" + e.getColumnNumber();
      }
      System.out.println("{\"file\":" + json(arg) + "," + out + "}");
    }
  }
}
